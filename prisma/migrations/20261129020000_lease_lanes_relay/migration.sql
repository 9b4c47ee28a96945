-- Webhook lanes and the event relay on the one lease mechanism (src/core/lease.ts, docs/leases.md): a generation
-- fencing a stale holder, and rows kept (no owner) when handed back. Rolling deploy: only added columns and dropped
-- NOT NULLs; a row handed back keeps a past deadline, so processes of the previous release still take it (their
-- condition is "deadline passed"); rows of theirs have generation 0 and are taken over as any expired lease.
-- AlterTable
ALTER TABLE "EventRelay" ADD COLUMN     "generation" INTEGER NOT NULL DEFAULT 0,
ALTER COLUMN "owner" DROP NOT NULL,
ALTER COLUMN "leaseUntil" DROP NOT NULL;

-- AlterTable
ALTER TABLE "WebhookLane" ADD COLUMN     "generation" INTEGER NOT NULL DEFAULT 0,
ALTER COLUMN "owner" DROP NOT NULL,
ALTER COLUMN "leaseUntil" DROP NOT NULL;
