-- Running balances split into shards: concurrent postings to one account take different rows instead of queueing
-- on one row lock. The balance is the sum of its shards; existing balances become shard 0.
ALTER TABLE "Balance" ADD COLUMN "shard" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Balance" DROP CONSTRAINT "Balance_pkey";
ALTER TABLE "Balance" ADD CONSTRAINT "Balance_pkey" PRIMARY KEY ("companyId", "asset", "account", "shard");
-- BALANCE_SHARDS in src/ledger/ledger.ts; raising it needs a migration that widens this.
ALTER TABLE "Balance" ADD CONSTRAINT "Balance_shard_range" CHECK ("shard" >= 0 AND "shard" < 16);
