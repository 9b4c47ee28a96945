import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import { invoiceWebhookPayload, type InvoiceStatus } from '../invoices/status.ts';

type Tx = Prisma.TransactionClient;

/**
 * Records an invoice status event in the caller's transaction (transactional outbox): the state change
 * and its event commit together or not at all. Delivery reads from this table.
 */
export async function recordInvoiceEvent(tx: Tx, companyId: string, invoiceId: string, status: InvoiceStatus): Promise<void> {
  await recordEvent(tx, companyId, invoiceId, `invoice.${status}`, { ...invoiceWebhookPayload(invoiceId, status) });
}

/** Any event of an invoice; `payload` is what a webhook for it carries. */
export async function recordEvent(tx: Tx, companyId: string, invoiceId: string, type: string, payload: Prisma.InputJsonObject): Promise<void> {
  // createMany: an INSERT without RETURNING; nothing here needs the row back.
  await tx.event.createMany({ data: { id: randomUUID(), companyId, type, invoiceId, payload } });
}
