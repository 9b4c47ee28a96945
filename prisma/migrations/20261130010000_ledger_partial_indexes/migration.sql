-- A payment's entries name no withdrawal and no feature subject: with the indexes on those columns partial
-- (non-null only), the four entries of a payment write 8 index entries fewer. Lookups by either column
-- ("withdrawalId" = ..., "subjectId" = ...) imply non-null and use the partial index as before.
DROP INDEX "LedgerEntry_withdrawalId_idx";
CREATE INDEX "LedgerEntry_withdrawalId_idx" ON "LedgerEntry"("withdrawalId") WHERE "withdrawalId" IS NOT NULL;
DROP INDEX "LedgerEntry_subjectId_idx";
CREATE INDEX "LedgerEntry_subjectId_idx" ON "LedgerEntry"("subjectId") WHERE "subjectId" IS NOT NULL;
