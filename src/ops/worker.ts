// The ops endpoints of a worker process (npm run chains:worker, npm run webhooks:worker): what such a process commits
// (payments credited on chain, withdrawals confirmed, webhooks delivered) is counted in its own registry, which only
// its own listener can show. Off unless WORKER_METRICS_PORT is set; the same rules as the server's public listener
// (/metrics needs METRICS_TOKEN; the probes need none and say no more than check names and states).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Chains } from '../chains/registry.ts';
import type { JobRunner } from '../core/jobs.ts';
import type { Database } from '../db/client.ts';
import { AppError } from '../errors/app-error.ts';
import { errorBody, sendJson } from '../http/io.ts';
import { listen, type Listening } from '../http/listen.ts';
import type { Logger } from '../logger.ts';
import { serverOps } from './endpoints.ts';
import type { MetricsRegistry } from './metrics.ts';

/** What a worker's ops listener reads of the configuration (WORKER_METRICS_PORT unset: no listener). */
export interface WorkerOpsConfig {
  workerMetricsPort?: number | undefined;
  workerMetricsHost: string;
  metricsToken?: string | undefined;
}

export interface WorkerOpsDeps {
  metrics: MetricsRegistry;
  database: Database;
  jobs: JobRunner;
  chains: Chains;
  logger: Logger;
}

/** Starts the listener when WORKER_METRICS_PORT is set; null otherwise. */
export async function startWorkerOps(config: WorkerOpsConfig, deps: WorkerOpsDeps): Promise<Listening | null> {
  if (config.workerMetricsPort === undefined) return null;
  const ops = serverOps({ metrics: deps.metrics, database: deps.database, jobs: deps.jobs, chains: deps.chains, metricsToken: config.metricsToken });
  const server = createServer((req, res) => {
    const requestId = randomUUID();
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    ops
      .serve(req, res, pathname, requestId)
      .then((served) => {
        if (!served) sendJson(res, 404, errorBody(new AppError('NOT_FOUND', `No route for ${req.method} ${pathname}`), requestId));
      })
      .catch((e: unknown) => {
        deps.logger.error({ err: e }, 'ops request failed');
        res.destroy();
      });
  });
  return listen(server, config.workerMetricsPort, config.workerMetricsHost);
}
