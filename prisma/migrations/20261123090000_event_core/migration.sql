-- Events of any kind: a subject (type + id) instead of an invoice id.
ALTER TABLE "Event" RENAME COLUMN "invoiceId" TO "subjectId";
ALTER INDEX "Event_invoiceId_idx" RENAME TO "Event_subjectId_idx";
ALTER TABLE "Event" ADD COLUMN "subjectType" TEXT NOT NULL DEFAULT 'invoice';
ALTER TABLE "Event" ALTER COLUMN "subjectType" DROP DEFAULT;

-- json keeps the payload's text (and so its key order) exactly as written: the webhook body is that text.
ALTER TABLE "Event" ALTER COLUMN "payload" TYPE JSON USING "payload"::json;
UPDATE "Event" SET "payload" = json_build_object('invoiceId', "payload"->>'invoiceId', 'status', "payload"->>'status', 'message', "payload"->>'message')
WHERE "type" IN ('invoice.created', 'invoice.pending', 'invoice.processing', 'invoice.done', 'invoice.wrong', 'invoice.refunded', 'invoice.closed');

-- The writing transaction's id: the event bus publishes in (txid, seq) order and only below the oldest
-- transaction still running, so an event that commits late is never skipped. Rows before this are old news.
ALTER TABLE "Event" ADD COLUMN "txid" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "Event" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;
CREATE INDEX "Event_txid_seq_idx" ON "Event"("txid", "seq");

-- Idempotency keys expire (at least 24 h); the pruner deletes them.
ALTER TABLE "IdempotencyKey" ADD COLUMN "expiresAt" TIMESTAMPTZ(3) NOT NULL DEFAULT (now() + interval '7 days');
ALTER TABLE "IdempotencyKey" ALTER COLUMN "expiresAt" DROP DEFAULT;
CREATE INDEX "IdempotencyKey_expiresAt_idx" ON "IdempotencyKey"("expiresAt");
ALTER TABLE "IdempotencyKey" DROP COLUMN "responseStatus";
