-- CreateEnum
CREATE TYPE "TransferState" AS ENUM ('seen', 'confirmed', 'dropped');

-- CreateEnum
CREATE TYPE "TransferRole" AS ENUM ('payment', 'late', 'wrong_asset');

-- AlterTable
ALTER TABLE "Invoice" ADD COLUMN     "feeCharged" DECIMAL(38,18),
ADD COLUMN     "overpaidAmount" DECIMAL(38,18) NOT NULL DEFAULT 0,
ADD COLUMN     "paidAmount" DECIMAL(38,18) NOT NULL DEFAULT 0,
ADD COLUMN     "settledAt" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "ChainTransfer" (
    "id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "outputIndex" INTEGER NOT NULL DEFAULT 0,
    "fromAddress" TEXT,
    "toAddress" TEXT NOT NULL,
    "tag" TEXT,
    "amount" DECIMAL(38,18) NOT NULL,
    "confirmations" INTEGER NOT NULL DEFAULT 0,
    "blockNumber" BIGINT,
    "state" "TransferState" NOT NULL DEFAULT 'seen',
    "role" "TransferRole" NOT NULL,
    "companyId" UUID NOT NULL,
    "invoiceId" TEXT NOT NULL,
    "addressId" TEXT NOT NULL,
    "seenAt" TIMESTAMPTZ(3) NOT NULL,
    "confirmedAt" TIMESTAMPTZ(3),
    "droppedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChainTransfer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LedgerEntry" (
    "id" UUID NOT NULL,
    "journalId" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "kind" TEXT NOT NULL,
    "invoiceId" TEXT,
    "transferId" UUID,
    "refundId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LedgerEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Balance" (
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Balance_pkey" PRIMARY KEY ("companyId","asset","account")
);

-- CreateTable
CREATE TABLE "Refund" (
    "id" UUID NOT NULL,
    "invoiceId" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "networkFee" DECIMAL(38,18) NOT NULL,
    "toAddress" TEXT NOT NULL,
    "tag" TEXT,
    "status" TEXT NOT NULL,
    "txHash" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sentAt" TIMESTAMPTZ(3),

    CONSTRAINT "Refund_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UnderpaymentLimit" (
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "fixed" DECIMAL(38,18),
    "percent" DECIMAL(9,4),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "UnderpaymentLimit_pkey" PRIMARY KEY ("companyId","asset")
);

-- CreateTable
CREATE TABLE "SandboxClock" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "offsetMs" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "SandboxClock_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ChainTransfer_invoiceId_idx" ON "ChainTransfer"("invoiceId");

-- CreateIndex
CREATE UNIQUE INDEX "ChainTransfer_network_txHash_outputIndex_key" ON "ChainTransfer"("network", "txHash", "outputIndex");

-- CreateIndex
CREATE INDEX "LedgerEntry_companyId_asset_account_idx" ON "LedgerEntry"("companyId", "asset", "account");

-- CreateIndex
CREATE INDEX "LedgerEntry_journalId_idx" ON "LedgerEntry"("journalId");

-- CreateIndex
CREATE INDEX "LedgerEntry_invoiceId_idx" ON "LedgerEntry"("invoiceId");

-- CreateIndex
CREATE UNIQUE INDEX "Refund_invoiceId_key" ON "Refund"("invoiceId");

-- CreateIndex
CREATE INDEX "Refund_status_idx" ON "Refund"("status");

-- AddForeignKey
ALTER TABLE "ChainTransfer" ADD CONSTRAINT "ChainTransfer_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Refund" ADD CONSTRAINT "Refund_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UnderpaymentLimit" ADD CONSTRAINT "UnderpaymentLimit_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

