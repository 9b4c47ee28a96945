import { z } from 'zod';
import { configSection, milliseconds } from '../core/config-section.ts';

export const invoiceConfig = configSection('', {
  /** JSON file of exchange rates (docs/payments.md); built-in sandbox rates otherwise. */
  RATES_FILE: z.string().min(1).optional(),
  /** JSON file of per-currency invoice fees. */
  FEES_FILE: z.string().min(1).optional(),
  SWEEP_INTERVAL_MS: milliseconds(100, 3_600_000, 5_000),
  REFUND_RETRY_INTERVAL_MS: milliseconds(100, 3_600_000, 30_000),
});
