import { INVOICE_STATUSES, INVOICE_STATUS_MESSAGES, type InvoiceStatus } from '../invoices/status.ts';

/**
 * An event's webhook payload with keys in the spec's order (jsonb storage does not keep key order, so invoice
 * payloads are rebuilt field by field).
 */
export function webhookPayload(type: string, payload: unknown): unknown {
  const p = (payload ?? {}) as Record<string, unknown>;
  const status = type.startsWith('invoice.') ? (type.slice('invoice.'.length) as InvoiceStatus) : null;
  if (status && (INVOICE_STATUSES as readonly string[]).includes(status)) {
    return { invoiceId: p['invoiceId'], status, message: INVOICE_STATUS_MESSAGES[status] };
  }
  return p;
}

/** The exact bytes sent and signed: `JSON.stringify` of the payload. */
export const webhookBody = (type: string, payload: unknown): string => JSON.stringify(webhookPayload(type, payload));
