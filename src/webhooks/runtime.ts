import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { WebhookSender } from './sender.ts';
import type { WebhookDeps } from './service.ts';
import { WebhookWorker } from './worker.ts';

/** The sender, the worker (started only where it should run) and the deps the API needs. */
export function createWebhookRuntime(config: Config, db: Db, clock: Clock, logger: Logger, runWorker: boolean) {
  const sender = new WebhookSender(config.webhooks.timeoutMs, config.webhooks.allowPrivate);
  const worker = new WebhookWorker(
    { db, clock, logger, sender },
    {
      concurrency: config.webhooks.concurrency,
      batchSize: config.webhooks.batchSize,
      leaseMs: config.webhooks.leaseMs,
      pollMs: config.webhooks.pollMs,
    },
  );
  if (runWorker) worker.start();
  const deps: WebhookDeps = { db, clock, sender, allowPrivate: config.webhooks.allowPrivate, wake: () => worker.wake() };
  return {
    deps,
    worker,
    async stop() {
      await worker.stop();
      sender.close();
    },
  };
}
