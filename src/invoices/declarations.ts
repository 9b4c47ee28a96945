// What invoices name that the layers below handle without knowing them (docs/architecture.md, "Adding a feature"):
// their webhook events, the journals of their fees and refunds, their ledger check, the invoice status counter and
// the refunds they pay out on chain.
import type { Declarations } from '../core/feature.ts';
import { invoiceStatusCheck } from './ledger-checks.ts';

export const INVOICE_EVENT_TYPES = {
  'invoice.created': 'An invoice was created.',
  'invoice.pending': 'The client filled the invoice and got a payment address.',
  'invoice.processing': 'A payment was seen on chain and awaits confirmations.',
  'invoice.done': 'The invoice is paid.',
  'invoice.wrong': 'The confirmed payment is short of the amount due.',
  'invoice.refunded': 'The payment went back to the client.',
  'invoice.closed': 'The invoice expired unpaid.',
} as const;

export const INVOICE_JOURNAL_KINDS = ['fee', 'refund'] as const;

declare module '../domain/event-types.ts' {
  interface EventTypes extends Record<keyof typeof INVOICE_EVENT_TYPES, true> {}
}
declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof INVOICE_JOURNAL_KINDS)[number], true> {}
}
declare module '../chains/adapter.ts' {
  interface OutgoingPurposes {
    refund: true;
  }
}

export const invoiceDeclarations = {
  eventTypes: INVOICE_EVENT_TYPES,
  journalKinds: INVOICE_JOURNAL_KINDS,
  ledgerChecks: [invoiceStatusCheck],
  transitions: { invoice: 'Invoice status changes committed by this process, by the status entered (created counts new invoices).' },
  outgoingPurposes: ['refund'],
} satisfies Declarations;
