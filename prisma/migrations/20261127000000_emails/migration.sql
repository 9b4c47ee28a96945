-- E-mails to the paying client and the merchant (issue 27): the client's language on the invoice, per-tenant
-- notification settings, one delivery row per (event, kind, recipient) like webhook deliveries, and the planner's
-- position in the event order. The planner starts at the present: events from before this migration send nothing.
-- AlterTable
ALTER TABLE "Invoice" ADD COLUMN     "lang" TEXT;

-- CreateTable
CREATE TABLE "NotificationSettings" (
    "companyId" UUID NOT NULL,
    "clientOff" TEXT[],
    "merchantEmails" TEXT[],
    "merchantOff" TEXT[],
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NotificationSettings_pkey" PRIMARY KEY ("companyId")
);

-- CreateTable
CREATE TABLE "EmailDelivery" (
    "id" UUID NOT NULL,
    "eventId" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "invoiceId" TEXT,
    "kind" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "lang" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL,
    "claimedUntil" TIMESTAMPTZ(3),
    "lastResponseCode" INTEGER,
    "lastError" TEXT,
    "messageId" TEXT,
    "sentAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EmailDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EmailCursor" (
    "id" TEXT NOT NULL,
    "txid" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,

    CONSTRAINT "EmailCursor_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EmailPlanned" (
    "eventId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EmailPlanned_pkey" PRIMARY KEY ("eventId")
);

-- CreateIndex
CREATE INDEX "EmailDelivery_status_nextAttemptAt_idx" ON "EmailDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "EmailDelivery_companyId_createdAt_idx" ON "EmailDelivery"("companyId", "createdAt");

-- CreateIndex
CREATE INDEX "EmailDelivery_invoiceId_idx" ON "EmailDelivery"("invoiceId");

-- CreateIndex
CREATE INDEX "EmailDelivery_companyId_recipient_createdAt_idx" ON "EmailDelivery"("companyId", "recipient", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "EmailDelivery_eventId_kind_recipient_key" ON "EmailDelivery"("eventId", "kind", "recipient");

-- AddForeignKey
ALTER TABLE "NotificationSettings" ADD CONSTRAINT "NotificationSettings_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EmailDelivery" ADD CONSTRAINT "EmailDelivery_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "Event"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EmailDelivery" ADD CONSTRAINT "EmailDelivery_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Everything committed before now is history (the event bus's horizon, src/core/bus.ts presentPosition).
INSERT INTO "EmailCursor" ("id", "txid", "seq")
VALUES ('emails', (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint - 1, 9223372036854775807);
