-- Real chains (issue 14): addresses derived from extended public keys, the watchers' progress, and what the service
-- itself sends on chain (withdrawals, refunds, consolidation).

-- One row per derived receiving address: an index is handed out once, to one owner (an invoice or a static address).
CREATE TABLE "DerivedAddress" (
    "network" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "DerivedAddress_pkey" PRIMARY KEY ("network", "index")
);
CREATE UNIQUE INDEX "DerivedAddress_network_address_key" ON "DerivedAddress"("network", "address");

-- A watcher's progress on one network (the adapter's own cursor as JSON) and its lease: one process scans at a time.
CREATE TABLE "ChainCursor" (
    "network" TEXT NOT NULL,
    "state" JSONB NOT NULL,
    "owner" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ChainCursor_pkey" PRIMARY KEY ("network")
);

-- Outgoing transactions: written (signed) before the broadcast, so a send repeated after a crash broadcasts the
-- same transaction, never a second one.
CREATE TABLE "ChainSend" (
    "id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "fromAddress" TEXT NOT NULL,
    "toAddress" TEXT NOT NULL,
    "tag" TEXT,
    "amount" DECIMAL(38,18) NOT NULL,
    "rawTx" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "nonce" BIGINT,
    "status" TEXT NOT NULL,
    "previousTxHashes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "blockNumber" BIGINT,
    "fee" DECIMAL(38,18),
    "inputs" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ChainSend_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "ChainSend_network_status_idx" ON "ChainSend"("network", "status");
CREATE UNIQUE INDEX "ChainSend_network_fromAddress_nonce_key" ON "ChainSend"("network", "fromAddress", "nonce");
