import type { Clock } from '../clock.ts';
import type { EventBus } from '../core/bus.ts';
import type { ConfigOf } from '../core/config-section.ts';
import type { Declared } from '../core/feature.ts';
import type { Job } from '../core/jobs.ts';
import type { Metrics } from '../core/metrics.ts';
import type { CoreConfig } from '../core/settings.ts';
import { postgresPool } from '../db/adapters.ts';
import { postgresClient, type Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import type { webhookConfig } from './config.ts';
import { webhookMetrics } from './metrics.ts';
import { WebhookSender } from './sender.ts';
import type { WebhookDeps } from './service.ts';
import { WebhookWorker } from './worker.ts';

export type WebhookConfig = ConfigOf<typeof webhookConfig>;

interface RuntimePlatform {
  config: CoreConfig;
  db: Db;
  clock: Clock;
  logger: Logger;
  bus: EventBus;
  metrics: Metrics;
  declared: Pick<Declared, 'internalEventTypes'>;
}

/**
 * The sender, the worker and the deps the API needs. The worker wakes on every published event (the bus) and
 * when a test clock moves (retries may be due); its poll covers the rest.
 */
export function createWebhookRuntime(config: WebhookConfig, platform: RuntimePlatform, runsWorker: boolean) {
  const { db, clock, logger, bus } = platform;
  // Sockets per host: every lane's pipeline may target one host (merchants behind one integration platform).
  const sender = new WebhookSender(config.timeoutMs, config.allowPrivate, Math.max(64, config.concurrency * config.pipeline));
  // On PostgreSQL the worker has connections of its own: on the server's pool its claims and records queued
  // behind every request in flight, and under load it fell seconds behind the events it delivers.
  const own = runsWorker && !platform.config.embedded && config.dbPoolSize > 0 ? postgresPool(platform.config.databaseUrl, config.dbPoolSize) : null;
  own?.on('error', (e) => logger.warn({ err: e }, 'webhook worker: database connection lost; the pool reconnects'));
  const workerDb = own ? postgresClient(own, platform.config.dbPreparedStatements) : db;
  const worker = new WebhookWorker(
    { db: workerDb, clock, logger, sender, metrics: runsWorker ? webhookMetrics(platform.metrics) : undefined },
    {
      concurrency: config.concurrency,
      batchSize: config.batchSize,
      leaseMs: config.leaseMs,
      pollMs: config.pollMs,
      pipeline: config.pipeline,
      asyncCommit: !platform.config.embedded,
    },
  );
  bus.subscribe(() => worker.wake());
  clock.onAdvance(() => worker.wake());
  const deps: WebhookDeps = { db, clock, sender, allowPrivate: config.allowPrivate, wake: () => worker.wake(), internalEventTypes: platform.declared.internalEventTypes };
  const workerJob: Job = {
    name: 'webhook-worker',
    start: () => worker.start(),
    stop: async () => {
      await worker.stop();
      if (own) {
        await workerDb.$disconnect();
        await own.end();
      }
    },
    // The worker claims continuously; a run on demand is a wake-up.
    runOnce: async () => worker.wake(),
    running: () => worker.started,
  };
  return { deps, workerJob, close: () => sender.close() };
}
