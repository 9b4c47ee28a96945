-- Balances are read from "Balance" (running, sharded), never summed from entries by account; the checks that group
-- entries by account read the whole table. The index only cost every entry an index entry (four per payment).
DROP INDEX "LedgerEntry_companyId_asset_account_idx";
