import { configSection, milliseconds } from '../core/config-section.ts';

export const withdrawalConfig = configSection('WITHDRAWAL_', {
  /** The sender also runs this often (it wakes at once for each new withdrawal); a failed send is retried then. */
  WITHDRAWAL_SEND_INTERVAL_MS: milliseconds(100, 3_600_000, 5_000),
  /**
   * How long a send in progress is left to its process before another run takes it over (after a crash). The
   * adapter's send is idempotent per withdrawal, so a takeover repeats the call, never the transaction.
   */
  WITHDRAWAL_SEND_LEASE_MS: milliseconds(100, 3_600_000, 30_000),
});
