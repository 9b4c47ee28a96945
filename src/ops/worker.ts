// The ops endpoints of a worker process (npm run chains:worker, npm run webhooks:worker): what such a process commits
// (payments credited on chain, withdrawals confirmed, webhooks delivered) is counted in its own registry, which only
// its own listener can show. Off unless WORKER_METRICS_PORT is set; the same rules as the server's public listener
// (/metrics needs METRICS_TOKEN; the probes need none and say no more than check names and states).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Chains } from '../chains/registry.ts';
import type { JobRunner } from '../core/jobs.ts';
import type { Database } from '../db/client.ts';
import { AppError } from '../errors/app-error.ts';
import { errorBody, sendJson } from '../http/io.ts';
import type { Logger } from '../logger.ts';
import { serverOps } from './endpoints.ts';
import type { MetricsRegistry } from './metrics.ts';

export interface WorkerOpsOptions {
  host: string;
  port: number;
  metricsToken: string | undefined;
  metrics: MetricsRegistry;
  database: Database;
  jobs: JobRunner;
  chains: Chains;
  logger: Logger;
}

export async function startWorkerOps(options: WorkerOpsOptions): Promise<{ url: string; stop(): Promise<void> }> {
  const ops = serverOps({ metrics: options.metrics, database: options.database, jobs: options.jobs, chains: options.chains, metricsToken: options.metricsToken });
  const server = createServer((req, res) => {
    const requestId = randomUUID();
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    ops
      .serve(req, res, pathname, requestId)
      .then((served) => {
        if (!served) sendJson(res, 404, errorBody(new AppError('NOT_FOUND', `No route for ${req.method} ${pathname}`), requestId));
      })
      .catch((e: unknown) => {
        options.logger.error({ err: e }, 'ops request failed');
        res.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
