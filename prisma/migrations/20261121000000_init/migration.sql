-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "InvoiceStatus" AS ENUM ('created', 'pending', 'processing', 'done', 'wrong', 'refunded', 'closed');

-- CreateTable
CREATE TABLE "Company" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "logoUrl" TEXT NOT NULL DEFAULT '',
    "redirectUrl" TEXT,
    "acceptedAssets" TEXT[],
    "publicTokenHash" TEXT NOT NULL,
    "secretKey" TEXT NOT NULL,
    "webhookUrl" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Company_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Invoice" (
    "id" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "status" "InvoiceStatus" NOT NULL DEFAULT 'created',
    "invoiceCurrency" TEXT NOT NULL,
    "fixedPaymentCurrency" TEXT,
    "paymentCurrency" TEXT,
    "isMerchantPaysFee" BOOLEAN NOT NULL DEFAULT false,
    "requestedRedirectUrl" TEXT,
    "redirectUrl" TEXT,
    "total" DECIMAL(38,18) NOT NULL,
    "clientEmail" TEXT,
    "rate" DECIMAL(38,18),
    "invoiceFee" DECIMAL(38,18),
    "paymentAmount" DECIMAL(38,18),
    "expiredAt" TIMESTAMPTZ(3),
    "proceededAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Invoice_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "InvoiceItem" (
    "invoiceId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "price" DECIMAL(38,18) NOT NULL,

    CONSTRAINT "InvoiceItem_pkey" PRIMARY KEY ("invoiceId","position")
);

-- CreateTable
CREATE TABLE "PaymentAddress" (
    "id" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "invoiceId" TEXT,
    "asset" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "tag" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PaymentAddress_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Event" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "companyId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "invoiceId" TEXT,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IdempotencyKey" (
    "companyId" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "responseStatus" INTEGER NOT NULL,
    "responseBody" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyKey_pkey" PRIMARY KEY ("companyId","key")
);

-- CreateIndex
CREATE UNIQUE INDEX "Company_publicTokenHash_key" ON "Company"("publicTokenHash");

-- CreateIndex
CREATE INDEX "Invoice_companyId_createdAt_id_idx" ON "Invoice"("companyId", "createdAt" DESC, "id");

-- CreateIndex
CREATE INDEX "Invoice_companyId_status_createdAt_idx" ON "Invoice"("companyId", "status", "createdAt" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "PaymentAddress_invoiceId_key" ON "PaymentAddress"("invoiceId");

-- CreateIndex
CREATE UNIQUE INDEX "PaymentAddress_asset_address_tag_key" ON "PaymentAddress"("asset", "address", "tag");

-- CreateIndex
CREATE UNIQUE INDEX "Event_seq_key" ON "Event"("seq");

-- CreateIndex
CREATE INDEX "Event_companyId_seq_idx" ON "Event"("companyId", "seq");

-- CreateIndex
CREATE INDEX "Event_invoiceId_idx" ON "Event"("invoiceId");

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "InvoiceItem" ADD CONSTRAINT "InvoiceItem_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PaymentAddress" ADD CONSTRAINT "PaymentAddress_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PaymentAddress" ADD CONSTRAINT "PaymentAddress_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

