-- A refund's outcome on chain (issue 14): `confirmed` once final; a send that fails on chain (reverted, its nonce or
-- inputs taken) puts the refund back to `queued` and counts the failure, and the next send goes out under a new id.
ALTER TABLE "Refund" ADD COLUMN "failedSends" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Refund" ADD COLUMN "confirmedAt" TIMESTAMPTZ(3);
