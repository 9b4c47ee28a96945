// npm run webhooks:worker — delivers webhooks from a process of its own (run the server with WEBHOOK_WORKER=0).
// PostgreSQL only: an embedded PGlite database belongs to the server process.
import { loadConfigOrExit } from '../config.ts';
import { declared } from '../features.ts';
import { createLogger } from '../logger.ts';
import { JobRunner } from '../core/jobs.ts';
import { MetricsRegistry } from '../ops/metrics.ts';
import { startWorkerOps } from '../ops/worker.ts';
import { openPlatform } from '../platform.ts';
import { exitOnSignals } from '../shutdown.ts';
import { createWebhookRuntime } from '../webhooks/runtime.ts';

const config = loadConfigOrExit();
if (config.embedded) {
  process.stderr.write('The webhook worker needs DATABASE_URL=postgresql://...; with the embedded database it runs inside the server.\n');
  process.exit(1);
}
const logger = createLogger(config.logLevel);
// The worker opens its own connections (WEBHOOK_DB_POOL_SIZE); this pool serves migrations and the event bus.
const poolSize = config.webhooks.dbPoolSize > 0 ? 1 : Math.min(config.dbPoolSize, config.webhooks.concurrency + 2);
// Deliveries' outcomes and lag are counted here: WORKER_METRICS_PORT shows them.
const metrics = new MetricsRegistry(logger);
const platform = await openPlatform(config, logger, { role: 'webhook worker', poolSize, metrics, declared });
const runtime = createWebhookRuntime(config.webhooks, platform, true);
const jobs = new JobRunner([runtime.workerJob]);
jobs.start();
const ops = await startWorkerOps(config, { metrics, database: platform.database, jobs, chains: platform.chains, logger });
logger.info({ concurrency: config.webhooks.concurrency, ops: ops?.url ?? null }, 'webhook worker running');

exitOnSignals(
  async () => {
    await ops?.stop();
    await jobs.stop();
    runtime.close();
    await platform.close();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger, name: 'webhook worker' },
);
