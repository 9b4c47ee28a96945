import { z } from 'zod';
import { configSection, flag, milliseconds } from '../core/config-section.ts';

export const webhookConfig = configSection(
  'WEBHOOK_',
  {
    WEBHOOK_TIMEOUT_MS: milliseconds(100, 60_000, 10_000),
    /** Endpoints served at once. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
    WEBHOOK_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
    WEBHOOK_POLL_MS: milliseconds(10, 60_000, 1_000),
    /** Attempts per endpoint started and not yet recorded (1: one at a time, strict arrival order). */
    WEBHOOK_PIPELINE: z.coerce.number().int().min(1).max(64).default(4),
    /** PostgreSQL connections of the worker's own, besides DB_POOL_SIZE (0: it shares the server's). */
    WEBHOOK_DB_POOL_SIZE: z.coerce.number().int().min(0).max(50).default(2),
    /** How long a worker's claim on a delivery, and on its endpoint's lane, holds; must outlast one attempt. Default: timeout + 20 s. */
    WEBHOOK_LEASE_MS: z.coerce.number().int().min(200).max(3_600_000).optional(),
    /** Lets webhooks reach private, loopback and link-local addresses (tests, private deployments). */
    WEBHOOK_ALLOW_PRIVATE: flag('0'),
    WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    /** How often finished deliveries past retention are deleted. */
    WEBHOOK_PRUNE_INTERVAL_MS: milliseconds(100, 86_400_000, 3_600_000),
    /** 0: deliver from a separate `npm run webhooks:worker` process instead of inside the server. */
    WEBHOOK_WORKER: flag('1'),
  },
  (c) =>
    c.leaseMs !== undefined && c.leaseMs <= c.timeoutMs
      ? 'WEBHOOK_LEASE_MS: must be longer than WEBHOOK_TIMEOUT_MS'
      : { leaseMs: c.leaseMs ?? c.timeoutMs + 20_000 },
);
