-- Autoswap (issue 28): rules, swaps, the ledger's link to them, and the sandbox venue's settings and orders.
ALTER TABLE "LedgerEntry" ADD COLUMN "autoswapId" UUID;
CREATE INDEX "LedgerEntry_autoswapId_idx" ON "LedgerEntry"("autoswapId");

CREATE TABLE "AutoSwapRule" (
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "isEnabled" BOOLEAN NOT NULL,
    "toCurrency" TEXT,
    "maxSlippagePercent" DECIMAL(5,2) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AutoSwapRule_pkey" PRIMARY KEY ("companyId", "asset")
);
ALTER TABLE "AutoSwapRule" ADD CONSTRAINT "AutoSwapRule_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "AutoSwap" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "fromCurrency" TEXT NOT NULL,
    "toCurrency" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "maxSlippagePercent" DECIMAL(5,2) NOT NULL,
    "status" TEXT NOT NULL,
    "venue" TEXT,
    "minOut" DECIMAL(38,18),
    "quotedRate" DECIMAL(38,18),
    "deadline" TIMESTAMPTZ(3),
    "ref" TEXT,
    "toAmount" DECIMAL(38,18),
    "venueFee" DECIMAL(38,18),
    "fee" DECIMAL(38,18),
    "failReason" TEXT,
    "lastError" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" TIMESTAMPTZ(3),
    "claim" UUID,
    "invoiceId" TEXT,
    "transferId" UUID,
    "addressId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMPTZ(3),
    CONSTRAINT "AutoSwap_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "AutoSwap_status_check" CHECK ("status" IN ('queued', 'submitted', 'done', 'failed')),
    CONSTRAINT "AutoSwap_amount_check" CHECK ("amount" > 0 AND "fromCurrency" <> "toCurrency")
);
CREATE INDEX "AutoSwap_status_nextAttemptAt_idx" ON "AutoSwap"("status", "nextAttemptAt");
CREATE INDEX "AutoSwap_invoiceId_idx" ON "AutoSwap"("invoiceId");
CREATE INDEX "AutoSwap_transferId_idx" ON "AutoSwap"("transferId");
CREATE INDEX "AutoSwap_companyId_createdAt_idx" ON "AutoSwap"("companyId", "createdAt");
ALTER TABLE "AutoSwap" ADD CONSTRAINT "AutoSwap_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "AutoSwap" ADD CONSTRAINT "AutoSwap_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "AutoSwap" ADD CONSTRAINT "AutoSwap_transferId_fkey" FOREIGN KEY ("transferId") REFERENCES "ChainTransfer"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "SandboxSwapVenue" (
    "companyId" UUID NOT NULL,
    "slippagePercent" DECIMAL(7,4) NOT NULL,
    "feePercent" DECIMAL(7,4) NOT NULL,
    "behaviour" TEXT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SandboxSwapVenue_pkey" PRIMARY KEY ("companyId"),
    CONSTRAINT "SandboxSwapVenue_behaviour_check" CHECK ("behaviour" IN ('fill', 'hold', 'down'))
);

CREATE TABLE "SandboxSwapOrder" (
    "swapId" UUID NOT NULL,
    "ref" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "minOut" DECIMAL(38,18) NOT NULL,
    "state" TEXT NOT NULL,
    "toAmount" DECIMAL(38,18),
    "venueFee" DECIMAL(38,18),
    "calls" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SandboxSwapOrder_pkey" PRIMARY KEY ("swapId")
);
