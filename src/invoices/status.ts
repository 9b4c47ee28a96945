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

export interface InvoiceWebhookPayload {
  invoiceId: string;
  status: InvoiceStatus;
  message: string;
}

/** The spec's invoice webhook, in the spec's key order. */
export const invoiceWebhookPayload = (invoiceId: string, status: InvoiceStatus): InvoiceWebhookPayload => ({
  invoiceId,
  status,
  message: INVOICE_STATUS_MESSAGES[status],
});

/** The event of an invoice entering `status`. */
export const invoiceStatusEvent = (companyId: string, invoiceId: string, status: InvoiceStatus): NewEvent => ({
  type: `invoice.${status}` satisfies EventType,
  companyId,
  subject: { type: 'invoice', id: invoiceId },
  payload: { ...invoiceWebhookPayload(invoiceId, status) },
});
