-- The merchant's order reference and metadata on invoices, and its decision on a short payment (issue 31). An orderId names at most one open invoice of a
-- merchant (companyId is per mode): a create that repeats it answers that invoice instead (docs/payments.md, "Order
-- references"). "requestHash" is the fingerprint of the create request that made the invoice, to tell a repeat from
-- another order under the same id. Partial index, so it lives here only (Prisma's schema cannot say WHERE).
ALTER TABLE "Invoice" ADD COLUMN "orderId" TEXT;
ALTER TABLE "Invoice" ADD COLUMN "metadata" JSON;
ALTER TABLE "Invoice" ADD COLUMN "requestHash" TEXT;
-- The merchant's decision on a short or late payment: accepted_short, accepted_late or refunded (null: none).
ALTER TABLE "Invoice" ADD COLUMN "settlement" TEXT;

CREATE UNIQUE INDEX "Invoice_open_orderId_key" ON "Invoice" ("companyId", "orderId")
  WHERE "orderId" IS NOT NULL AND "status" IN ('created', 'pending', 'processing', 'wrong');
