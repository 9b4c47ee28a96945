// What the soak keeps track of: the merchants' tenants, the writes the service acknowledged, the counters.
import type { Receiver } from './receivers.ts';

export type Mode = 'test' | 'live';

export interface OpenInvoice {
  id: string;
  amount: string;
  address: string;
}

export interface Tenant {
  label: string;
  mode: Mode;
  /** The Company row of this mode (the account id for test mode). */
  tenantId: string;
  token: string;
  secretKey: string;
  receiver: Receiver;
  created: string[];
  pending: OpenInvoice[];
  wrong: string[];
  staticAddresses: { id: string; address: string }[];
}

/** A write answered 2xx: it must exist at the end. */
export interface AckedWrite {
  kind: 'invoice' | 'proceed' | 'transfer' | 'withdrawal' | 'refund' | 'static-address' | 'webhook-url' | 'auto-withdrawal' | 'withdrawal-confirm';
  id: string;
  tenantId: string;
  /** What the check compares, where an id alone is not enough (the URL set, the asset of a rule). */
  detail?: string;
}

export class Tally {
  readonly counts = new Map<string, number>();
  add(kind: string, n = 1): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + n);
  }
  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
  line(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  }
}

export interface Ledger {
  acked: AckedWrite[];
  /** Operations by kind and outcome (ok, refused, error). */
  ops: Tally;
  faults: Tally;
  /** Database sessions ended by the pg_terminate_backend faults. */
  sessionsTerminated: number;
  /** Balances read during the run below zero: `tenant asset account value`. */
  negativeBalances: string[];
}
