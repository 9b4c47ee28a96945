-- One claim/lease mechanism (src/core/lease.ts, docs/leases.md): named leases keep their row when handed back (owner
-- and deadline cleared) and count a generation that fences a stale holder; withdrawal claims get their own deadline
-- instead of "updatedAt plus the lease". Existing rows stay valid: generation 0 is "never taken through the new
-- code", and a withdrawal being sent keeps the deadline it had under the default lease (30 s after its last update).
-- AlterTable
ALTER TABLE "ChainCursor" ADD COLUMN     "generation" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Withdrawal" ADD COLUMN     "claimedUntil" TIMESTAMPTZ(3);

UPDATE "Withdrawal" SET "claimedUntil" = "updatedAt" + interval '30 seconds' WHERE "stage" = 'sending';
