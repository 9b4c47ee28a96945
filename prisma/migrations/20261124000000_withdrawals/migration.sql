-- Withdrawals (issue 10): payouts held in the ledger until done or rejected, auto-withdrawal rules, and the
-- sandbox chain's record of what it broadcast.
ALTER TABLE "LedgerEntry" ADD COLUMN "withdrawalId" UUID;
CREATE INDEX "LedgerEntry_withdrawalId_idx" ON "LedgerEntry"("withdrawalId");

CREATE TABLE "Withdrawal" (
    "uid" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "fee" DECIMAL(38,18) NOT NULL,
    "toAddress" TEXT NOT NULL,
    "tag" TEXT,
    "status" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "txHash" TEXT,
    "origin" TEXT NOT NULL,
    "position" INTEGER NOT NULL DEFAULT 0,
    "rejectReason" TEXT,
    "sendAttempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sentAt" TIMESTAMPTZ(3),
    "completedAt" TIMESTAMPTZ(3),
    CONSTRAINT "Withdrawal_pkey" PRIMARY KEY ("uid"),
    CONSTRAINT "Withdrawal_status_check" CHECK ("status" IN ('processing', 'done', 'rejected')),
    CONSTRAINT "Withdrawal_stage_check" CHECK ("stage" IN ('queued', 'sending', 'sent', 'done', 'rejected')),
    CONSTRAINT "Withdrawal_amounts_check" CHECK ("amount" > 0 AND "fee" >= 0)
);
CREATE INDEX "Withdrawal_companyId_createdAt_uid_idx" ON "Withdrawal"("companyId", "createdAt" DESC, "uid");
CREATE INDEX "Withdrawal_stage_createdAt_position_idx" ON "Withdrawal"("stage", "createdAt", "position");
ALTER TABLE "Withdrawal" ADD CONSTRAINT "Withdrawal_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "AutoWithdrawal" (
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "isEnabled" BOOLEAN NOT NULL,
    "withdrawalTag" TEXT,
    "withdrawalAddress" TEXT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AutoWithdrawal_pkey" PRIMARY KEY ("companyId", "asset")
);
ALTER TABLE "AutoWithdrawal" ADD CONSTRAINT "AutoWithdrawal_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "SandboxBroadcast" (
    "transferId" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "toAddress" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SandboxBroadcast_pkey" PRIMARY KEY ("transferId")
);
CREATE UNIQUE INDEX "SandboxBroadcast_txHash_key" ON "SandboxBroadcast"("txHash");

-- The exact balance of one account for a debit: its debit lock (held until commit), then the sum of its shards
-- read with a snapshot taken after the lock (a VOLATILE function's statements each take a fresh snapshot), so it
-- includes every debit that held the lock before. One round trip where it used to take two, and usable inside a
-- statement that posts the debit only when covered (src/ledger/ledger.ts).
CREATE FUNCTION payrail_exact_balance(p_company UUID, p_asset TEXT, p_account TEXT) RETURNS NUMERIC
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- Slot -1: apart from the shard slots 0..15 of the same key (BALANCE_SHARDS).
  PERFORM pg_advisory_xact_lock(hashtext(p_company::text || '/' || p_asset || '/' || p_account), -1);
  RETURN (SELECT COALESCE(SUM("amount"), 0) FROM "Balance"
          WHERE "companyId" = p_company AND "asset" = p_asset AND "account" = p_account);
END
$$;

-- The fees invoices will still charge when they become done: min(invoiceFee, paid) of each invoice with confirmed
-- money and no fee yet. The fee is debited in the transaction that records an invoice's final payment.
CREATE FUNCTION payrail_uncharged_invoice_fees(p_company UUID, p_asset TEXT) RETURNS NUMERIC
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(SUM(LEAST("invoiceFee", "paidAmount")), 0) FROM "Invoice"
  WHERE "companyId" = p_company AND "paymentCurrency" = p_asset AND "paidAmount" > 0
    AND "feeCharged" IS NULL AND "status" <> 'refunded'
$$;

-- What withdrawals may take: the exact available balance (under the debit lock) less the uncharged invoice fees
-- (read under a snapshot after the lock, as the balance is). Leaving those fees in place means an invoice's last
-- payment can always be recorded.
CREATE FUNCTION payrail_withdrawable(p_company UUID, p_asset TEXT) RETURNS NUMERIC
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  available NUMERIC;
BEGIN
  available := payrail_exact_balance(p_company, p_asset, 'merchant_available');
  RETURN available - payrail_uncharged_invoice_fees(p_company, p_asset);
END
$$;
CREATE INDEX "Invoice_uncharged_fees_idx" ON "Invoice"("companyId", "paymentCurrency")
  WHERE "paidAmount" > 0 AND "feeCharged" IS NULL AND "status" <> 'refunded';
