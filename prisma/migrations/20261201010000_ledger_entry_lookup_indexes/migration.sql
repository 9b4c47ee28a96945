-- Index entries a payment's four ledger entries no longer write (8 of 16). No statement looks entries up by invoice
-- (the invoice ledger check aggregates the whole table), and the only lookup by journal is the exports' search for a
-- withdrawal journal's withdrawals, which asks for "withdrawalId" IS NOT NULL and so uses the partial index.
DROP INDEX "LedgerEntry_invoiceId_idx";
DROP INDEX "LedgerEntry_journalId_idx";
CREATE INDEX "LedgerEntry_journalId_idx" ON "LedgerEntry"("journalId") WHERE "withdrawalId" IS NOT NULL;
