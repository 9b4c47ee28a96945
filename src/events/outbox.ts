import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import { invoiceWebhookPayload, type InvoiceStatus } from '../invoices/status.ts';

type Tx = Prisma.TransactionClient;

/**
 * Records an invoice status event in the caller's transaction (transactional outbox): the state change, the
 * event and, when the company has a webhook URL, its delivery commit together or not at all. One statement.
 */
export async function recordInvoiceEvent(tx: Tx, companyId: string, invoiceId: string, status: InvoiceStatus): Promise<void> {
  const payload = JSON.stringify(invoiceWebhookPayload(invoiceId, status));
  await tx.$executeRaw`
    WITH e AS (
      INSERT INTO "Event" ("id", "companyId", "type", "invoiceId", "payload")
      VALUES (${randomUUID()}, ${companyId}::uuid, ${`invoice.${status}`}, ${invoiceId}, ${payload}::jsonb)
      RETURNING "id", "seq", "companyId"
    )
    INSERT INTO "WebhookDelivery" ("id", "eventId", "companyId", "url", "seq", "status", "nextAttemptAt")
    SELECT gen_random_uuid(), e."id", e."companyId", c."webhookUrl", e."seq", 'pending', now()
    FROM e JOIN "Company" c ON c."id" = e."companyId"
    WHERE c."webhookUrl" IS NOT NULL`;
}

/**
 * An event outside the spec's webhooks (late payment, unexpected asset): recorded for polling
 * (`GET /api/company/events`), not pushed, so integrations written against the spec see only spec payloads.
 */
export async function recordEvent(tx: Tx, companyId: string, invoiceId: string, type: string, payload: Prisma.InputJsonObject): Promise<void> {
  await tx.event.createMany({ data: { id: randomUUID(), companyId, type, invoiceId, payload } });
}
