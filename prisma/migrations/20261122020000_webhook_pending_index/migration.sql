-- The worker's claim reads due pending deliveries in event order; a partial index keeps it an index scan however
-- many delivered rows accumulate (Prisma's schema language cannot express a partial index).
CREATE INDEX "WebhookDelivery_pending_seq_idx" ON "WebhookDelivery" ("seq") WHERE "status" = 'pending';
