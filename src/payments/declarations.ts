// What payments name that the layers below handle without knowing them: the journals crediting what the chains
// report (docs/architecture.md, "Adding a feature").
import type { Declarations } from '../core/feature.ts';

export const PAYMENT_JOURNAL_KINDS = ['payment', 'late_payment', 'unexpected_asset'] as const;

declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof PAYMENT_JOURNAL_KINDS)[number], true> {}
}

export const paymentDeclarations = { journalKinds: PAYMENT_JOURNAL_KINDS } satisfies Declarations;
