-- Reconciliation exports (issue 15): a company's ledger entries read in (createdAt, id) order in keyset pages, and
-- short-lived download links (only a hash of each token is stored).
-- IF NOT EXISTS: on a large ledger an operator may build it first without blocking writes (CREATE INDEX CONCURRENTLY
-- under this name, docs/exports.md); this then finds it there.
CREATE INDEX IF NOT EXISTS "LedgerEntry_companyId_createdAt_id_idx" ON "LedgerEntry"("companyId", "createdAt", "id");

CREATE TABLE "ExportLink" (
    "tokenHash" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ExportLink_pkey" PRIMARY KEY ("tokenHash"),
    CONSTRAINT "ExportLink_kind_check" CHECK ("kind" IN ('ledger', 'invoices')),
    CONSTRAINT "ExportLink_range_check" CHECK ("from" < "to")
);
CREATE INDEX "ExportLink_expiresAt_idx" ON "ExportLink"("expiresAt");
ALTER TABLE "ExportLink" ADD CONSTRAINT "ExportLink_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
