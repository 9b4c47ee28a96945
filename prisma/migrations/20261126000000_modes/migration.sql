-- Test and live mode (issue 24): a merchant account has two tenants, one per mode, each a Company row with its own
-- credentials and data. Every table keyed by "companyId" is therefore per mode without a change. Existing rows are
-- test-mode tenants whose account id is their own id (docs/modes.md); their live twin is made when the operator first
-- issues live credentials.
CREATE TYPE "Mode" AS ENUM ('test', 'live');

ALTER TABLE "Company" ADD COLUMN "accountId" UUID;
ALTER TABLE "Company" ADD COLUMN "mode" "Mode" NOT NULL DEFAULT 'test';
UPDATE "Company" SET "accountId" = "id";
ALTER TABLE "Company" ALTER COLUMN "accountId" SET NOT NULL;
ALTER TABLE "Company" ALTER COLUMN "mode" DROP DEFAULT;
CREATE UNIQUE INDEX "Company_accountId_mode_key" ON "Company"("accountId", "mode");
-- A test tenant's id is its account's id, so an account id is never also another account's live tenant.
ALTER TABLE "Company" ADD CONSTRAINT "Company_test_id_check" CHECK ("mode" <> 'test' OR "id" = "accountId");

-- A live twin made for its secret key before any public token (rotate-secret --mode live) has no token yet.
ALTER TABLE "Company" ALTER COLUMN "publicTokenHash" DROP NOT NULL;

-- The sandbox chain and the real chains are separate chains: a transaction output is unique within its mode's, so a
-- simulated transfer (whose hash a test-mode caller may choose) never stands in for a real one.
ALTER TABLE "ChainTransfer" ADD COLUMN "mode" "Mode";
UPDATE "ChainTransfer" t SET "mode" = c."mode" FROM "Company" c WHERE c."id" = t."companyId";
ALTER TABLE "ChainTransfer" ALTER COLUMN "mode" SET NOT NULL;
DROP INDEX "ChainTransfer_network_txHash_outputIndex_key";
CREATE UNIQUE INDEX "ChainTransfer_mode_network_txHash_outputIndex_key" ON "ChainTransfer"("mode", "network", "txHash", "outputIndex");
