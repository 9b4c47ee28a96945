-- A company endpoint's lane belongs to one webhook worker at a time (src/webhooks/worker.ts), so two worker
-- processes never serve one endpoint at once and its ordering holds across processes. A row is a lease: free
-- again once "leaseUntil" has passed (a crashed worker), and deleted when its worker closes the lane.
CREATE TABLE "WebhookLane" (
    "companyId" UUID NOT NULL,
    "owner" UUID NOT NULL,
    "leaseUntil" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "WebhookLane_pkey" PRIMARY KEY ("companyId")
);
