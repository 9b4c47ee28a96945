// What payments name that the layers below handle without knowing them: the journals crediting what the chains
// report (docs/architecture.md, "Adding a feature").
import type { Declarations } from '../core/feature.ts';

export const PAYMENT_JOURNAL_KINDS = ['payment', 'late_payment', 'unexpected_asset'] as const;

declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof PAYMENT_JOURNAL_KINDS)[number], true> {}
}

/**
 * A transfer to an invoice's address was first seen, or gained confirmations, without moving the invoice's status
 * (1 of 2 -> 2 of 2 while processing): the invoice subscriptions send the invoice again (docs/live.md). Internal:
 * the status webhooks are the spec's, so this is neither pushed nor in the events feed.
 */
export const INVOICE_CONFIRMATIONS = 'invoice.confirmations';

export const paymentDeclarations = { journalKinds: PAYMENT_JOURNAL_KINDS, internalEventTypes: [INVOICE_CONFIRMATIONS] } satisfies Declarations;
