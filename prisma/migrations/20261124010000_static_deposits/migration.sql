-- Static deposit addresses (issue 11): a permanent address per merchant user and payment currency, and deposits
-- to them recorded as chain transfers without an invoice.
ALTER TYPE "TransferState" ADD VALUE 'frozen';
ALTER TYPE "TransferRole" ADD VALUE 'deposit';
ALTER TABLE "ChainTransfer" ALTER COLUMN "invoiceId" DROP NOT NULL;
CREATE INDEX "ChainTransfer_addressId_seenAt_idx" ON "ChainTransfer"("addressId", "seenAt");

CREATE TABLE "StaticAddress" (
    "id" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "internalUserId" TEXT NOT NULL,
    "email" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "StaticAddress_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "StaticAddress_companyId_asset_internalUserId_key" ON "StaticAddress"("companyId", "asset", "internalUserId");
CREATE INDEX "StaticAddress_companyId_createdAt_id_idx" ON "StaticAddress"("companyId", "createdAt" DESC, "id");
ALTER TABLE "StaticAddress" ADD CONSTRAINT "StaticAddress_id_fkey" FOREIGN KEY ("id") REFERENCES "PaymentAddress"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
