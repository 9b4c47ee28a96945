-- The event bus relay (issue 12): with a fan-out (Redis), one process at a time reads the Event table and
-- publishes it; this row is its lease.
CREATE TABLE "EventRelay" (
    "id" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "leaseUntil" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "EventRelay_pkey" PRIMARY KEY ("id")
);
