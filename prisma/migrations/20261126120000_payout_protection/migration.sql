-- Payout protection (issue 26): a per-tenant policy (allow-list only, cool-down, a weakening that waits) and the
-- payout address book.
CREATE TABLE "PayoutPolicy" (
    "companyId" UUID NOT NULL,
    "allowListOnly" BOOLEAN NOT NULL DEFAULT false,
    "cooldownHours" INTEGER NOT NULL DEFAULT 24,
    "pendingAllowListOnly" BOOLEAN,
    "pendingCooldownHours" INTEGER,
    "pendingEffectiveAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PayoutPolicy_pkey" PRIMARY KEY ("companyId"),
    CONSTRAINT "PayoutPolicy_cooldown_check" CHECK ("cooldownHours" BETWEEN 0 AND 8760 AND ("pendingCooldownHours" IS NULL OR "pendingCooldownHours" BETWEEN 0 AND 8760))
);
ALTER TABLE "PayoutPolicy" ADD CONSTRAINT "PayoutPolicy_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "PayoutAddress" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "asset" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "tag" TEXT,
    "label" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "PayoutAddress_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "PayoutAddress_companyId_createdAt_idx" ON "PayoutAddress"("companyId", "createdAt");
ALTER TABLE "PayoutAddress" ADD CONSTRAINT "PayoutAddress_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
