-- Store settings and payment links (issue 29): the store's default for isMerchantPaysFee, payment links and their
-- items, and the link that made an invoice.
ALTER TABLE "Company" ADD COLUMN "isMerchantPaysFee" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "PaymentLink" (
    "id" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "invoiceCurrency" TEXT NOT NULL,
    "fixedPaymentCurrency" TEXT,
    "isMerchantPaysFee" BOOLEAN,
    "redirectUrl" TEXT,
    "active" BOOLEAN NOT NULL,
    "deactivatedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PaymentLink_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "PaymentLink_companyId_createdAt_id_idx" ON "PaymentLink"("companyId", "createdAt" DESC, "id");
ALTER TABLE "PaymentLink" ADD CONSTRAINT "PaymentLink_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "PaymentLinkItem" (
    "paymentLinkId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "price" DECIMAL(38,18) NOT NULL,
    CONSTRAINT "PaymentLinkItem_pkey" PRIMARY KEY ("paymentLinkId", "position")
);
ALTER TABLE "PaymentLinkItem" ADD CONSTRAINT "PaymentLinkItem_paymentLinkId_fkey" FOREIGN KEY ("paymentLinkId") REFERENCES "PaymentLink"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "Invoice" ADD COLUMN "paymentLinkId" TEXT;
CREATE INDEX "Invoice_paymentLinkId_idx" ON "Invoice"("paymentLinkId");
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_paymentLinkId_fkey" FOREIGN KEY ("paymentLinkId") REFERENCES "PaymentLink"("id") ON DELETE SET NULL ON UPDATE CASCADE;
