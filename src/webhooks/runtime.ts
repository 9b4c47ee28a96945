import type { Clock } from '../clock.ts';
import type { EventBus } from '../core/bus.ts';
import type { ConfigOf } from '../core/config-section.ts';
import type { Job } from '../core/jobs.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import type { webhookConfig } from './config.ts';
import { WebhookSender } from './sender.ts';
import type { WebhookDeps } from './service.ts';
import { WebhookWorker } from './worker.ts';

export type WebhookConfig = ConfigOf<typeof webhookConfig>;

/**
 * The sender, the worker and the deps the API needs. The worker wakes on every published event (the bus) and
 * when a test clock moves (retries may be due); its poll covers the rest.
 */
export function createWebhookRuntime(config: WebhookConfig, platform: { db: Db; clock: Clock; logger: Logger; bus: EventBus }) {
  const { db, clock, logger, bus } = platform;
  const sender = new WebhookSender(config.timeoutMs, config.allowPrivate);
  const worker = new WebhookWorker(
    { db, clock, logger, sender },
    { concurrency: config.concurrency, batchSize: config.batchSize, leaseMs: config.leaseMs, pollMs: config.pollMs },
  );
  bus.subscribe(() => worker.wake());
  clock.onAdvance(() => worker.wake());
  const deps: WebhookDeps = { db, clock, sender, allowPrivate: config.allowPrivate, wake: () => worker.wake() };
  const workerJob: Job = {
    name: 'webhook-worker',
    start: () => worker.start(),
    stop: () => worker.stop(),
    // The worker claims continuously; a run on demand is a wake-up.
    runOnce: async () => worker.wake(),
  };
  return { deps, workerJob, close: () => sender.close() };
}
