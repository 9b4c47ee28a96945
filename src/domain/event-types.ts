// The closed set of event types the service emits (webhooks, the event feed, GraphQL's EventType enum).
// Features build their event types with `satisfies EventType`, so a new one cannot be emitted without being listed.
export const EVENT_TYPES = [
  'invoice.created',
  'invoice.pending',
  'invoice.processing',
  'invoice.done',
  'invoice.wrong',
  'invoice.refunded',
  'invoice.closed',
  'withdrawal.processing',
  'withdrawal.done',
  'withdrawal.rejected',
  'deposit.processing',
  'deposit.done',
  'deposit.failed',
  'deposit.frozen',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A company's credentials changed (a token rotated): its live connections are checked again (docs/live.md). */
export const CREDENTIALS_CHANGED = 'company.credentials_changed';

/**
 * A merchant's webhook endpoint has been failing for a while (src/emails/webhook-watch.ts): the merchant gets an
 * e-mail (docs/emails.md).
 */
export const WEBHOOK_FAILING = 'webhook.failing';

/**
 * A transfer to an invoice's address was first seen, or gained confirmations, without moving the invoice's status
 * (1 of 2 -> 2 of 2 while processing): the invoice subscriptions send the invoice again (docs/live.md). Internal:
 * the status webhooks are the spec's, so this is neither pushed nor in the events feed.
 */
export const INVOICE_CONFIRMATIONS = 'invoice.confirmations';

/**
 * Events for the service's own processes (on the event bus, in the Event table), never for the merchant: no webhook,
 * not in the events feed, not redeliverable.
 */
export const INTERNAL_EVENT_TYPES: readonly string[] = [CREDENTIALS_CHANGED, WEBHOOK_FAILING, INVOICE_CONFIRMATIONS];

export const EVENT_TYPE_DESCRIPTIONS: Record<EventType, string> = {
  'invoice.created': 'An invoice was created.',
  'invoice.pending': 'The client filled the invoice and got a payment address.',
  'invoice.processing': 'A payment was seen on chain and awaits confirmations.',
  'invoice.done': 'The invoice is paid.',
  'invoice.wrong': 'The confirmed payment is short of the amount due.',
  'invoice.refunded': 'The payment went back to the client.',
  'invoice.closed': 'The invoice expired unpaid.',
  'withdrawal.processing': 'A withdrawal was accepted (txHash empty), or the chain has its transaction (txHash set).',
  'withdrawal.done': 'A withdrawal is complete on chain.',
  'withdrawal.rejected': 'A withdrawal was blocked or failed; its money is available again.',
  'deposit.processing': 'A deposit to a static address was seen on chain and awaits confirmations.',
  'deposit.done': 'A deposit to a static address is confirmed and credited (less its fee).',
  'deposit.failed': 'A deposit left the chain before it was confirmed; nothing was credited.',
  'deposit.frozen': 'The risk checks hold a deposit; it is recorded and not credited.',
};
