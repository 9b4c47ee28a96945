-- The autoswap driver's and the e-mail sender's claims on the one mechanism (src/core/lease.ts RowClaims,
-- docs/leases.md): a generation bumped by every claim fences a stale holder's writes. Only added columns: 0 is "never
-- claimed through the new code". "AutoSwap"."claim" stays while processes of the previous release may still write
-- it (the new code sets it to NULL on every claim and writes only where it is NULL; a later release drops it).
-- AlterTable
ALTER TABLE "AutoSwap" ADD COLUMN     "claimGeneration" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "EmailDelivery" ADD COLUMN     "claimGeneration" INTEGER NOT NULL DEFAULT 0;
