// Invoice statuses and their webhook messages, verbatim from the spec.
import type { NewEvent } from '../core/events.ts';
import type { EventType } from '../domain/event-types.ts';

export const INVOICE_STATUSES = ['created', 'pending', 'processing', 'done', 'wrong', 'refunded', 'closed'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const INVOICE_STATUS_MESSAGES: Record<InvoiceStatus, string> = {
  created: 'Invoice created',
  pending: "User started payment process, but hasn't paid yet",
  processing: 'The client has made a payment, transaction confirmation is pending',
  done: 'Invoice paid',
  wrong: 'The payment amount is lower than the amount stated on the invoice',
  refunded: 'Invoice refunded',
  closed: 'Invoice closed',
};

/**
 * The merchant's decision on a short or late payment: kept as paid (a `wrong` invoice: accepted_short; a `closed`
 * one paid late: accepted_late) or refunded. Null until decided (docs/payments.md).
 */
export const SETTLEMENTS = ['accepted_short', 'accepted_late', 'refunded'] as const;
export type Settlement = (typeof SETTLEMENTS)[number];

/** What the merchant attached to the invoice at creation, and its decision; each only when there is one. */
export interface InvoiceWebhookExtras {
  orderId?: string | null;
  metadata?: unknown;
  settlement?: Settlement | null;
}

export interface InvoiceWebhookPayload {
  invoiceId: string;
  status: InvoiceStatus;
  message: string;
  orderId?: string;
  metadata?: Record<string, string>;
  settlement?: Settlement;
}

/** The spec's invoice webhook in the spec's key order, then ours, each only when set (docs/webhooks.md). */
export const invoiceWebhookPayload = (invoiceId: string, status: InvoiceStatus, extras: InvoiceWebhookExtras = {}): InvoiceWebhookPayload => ({
  invoiceId,
  status,
  message: INVOICE_STATUS_MESSAGES[status],
  ...(extras.orderId ? { orderId: extras.orderId } : {}),
  ...(extras.metadata ? { metadata: extras.metadata as Record<string, string> } : {}),
  ...(extras.settlement ? { settlement: extras.settlement } : {}),
});

/** The event of an invoice entering `status`. */
export const invoiceStatusEvent = (companyId: string, invoiceId: string, status: InvoiceStatus, extras: InvoiceWebhookExtras = {}): NewEvent => ({
  type: `invoice.${status}` satisfies EventType,
  companyId,
  subject: { type: 'invoice', id: invoiceId },
  payload: { ...invoiceWebhookPayload(invoiceId, status, extras) },
});
