// npm run webhooks:worker — delivers webhooks from a process of its own (run the server with WEBHOOK_WORKER=0).
// PostgreSQL only: an embedded PGlite database belongs to the server process.
import { loadConfigOrExit } from '../config.ts';
import { createLogger } from '../logger.ts';
import { openPlatform } from '../platform.ts';
import { exitOnSignals } from '../shutdown.ts';
import { createWebhookRuntime } from './runtime.ts';

const config = loadConfigOrExit();
if (config.embedded) {
  process.stderr.write('The webhook worker needs DATABASE_URL=postgresql://...; with the embedded database it runs inside the server.\n');
  process.exit(1);
}
const logger = createLogger(config.logLevel);
// The worker opens its own connections (WEBHOOK_DB_POOL_SIZE); this pool serves migrations and the event bus.
const poolSize = config.webhooks.dbPoolSize > 0 ? 1 : Math.min(config.dbPoolSize, config.webhooks.concurrency + 2);
const platform = await openPlatform(config, logger, { role: 'webhook worker', poolSize });
const runtime = createWebhookRuntime(config.webhooks, platform, true);
runtime.workerJob.start();
logger.info({ concurrency: config.webhooks.concurrency }, 'webhook worker running');

exitOnSignals(
  async () => {
    await runtime.workerJob.stop();
    runtime.close();
    await platform.close();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger, name: 'webhook worker' },
);
