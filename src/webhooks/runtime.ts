import { PrismaClient } from '../../generated/prisma/client.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { postgresAdapter, postgresPool } from '../db/adapters.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { WebhookSender } from './sender.ts';
import type { WebhookDeps } from './service.ts';
import { WebhookWorker } from './worker.ts';

/** The sender, the worker (started only where it should run) and the deps the API needs. */
export function createWebhookRuntime(config: Config, db: Db, clock: Clock, logger: Logger, runWorker: boolean) {
  // Sockets per host: every lane's pipeline may target one host (merchants behind one integration platform).
  const sender = new WebhookSender(config.webhooks.timeoutMs, config.webhooks.allowPrivate, Math.max(64, config.webhooks.concurrency * config.webhooks.pipeline));
  // On PostgreSQL the worker has connections of its own: on the server's pool its claims and records queued
  // behind every request in flight, and under load it fell seconds behind the events it delivers.
  const own = runWorker && !config.embedded && config.webhooks.dbPoolSize > 0 ? postgresPool(config.databaseUrl, config.webhooks.dbPoolSize) : null;
  own?.on('error', (e) => logger.warn({ err: e }, 'webhook worker: database connection lost; the pool reconnects'));
  const workerDb = own ? new PrismaClient({ adapter: postgresAdapter(own), errorFormat: 'minimal' }) : db;
  const worker = new WebhookWorker(
    { db: workerDb, clock, logger, sender },
    {
      concurrency: config.webhooks.concurrency,
      batchSize: config.webhooks.batchSize,
      leaseMs: config.webhooks.leaseMs,
      pollMs: config.webhooks.pollMs,
      pipeline: config.webhooks.pipeline,
      asyncCommit: !config.embedded,
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
      if (own) {
        await workerDb.$disconnect();
        await own.end();
      }
    },
  };
}
