-- The ledger names no feature: the object a feature's journal moves money for (an autoswap, ...) is its generic
-- subject reference, read by that feature's ledger check (docs/architecture.md, "Adding a feature").
ALTER TABLE "LedgerEntry" RENAME COLUMN "autoswapId" TO "subjectId";
ALTER INDEX "LedgerEntry_autoswapId_idx" RENAME TO "LedgerEntry_subjectId_idx";
