// /metrics, /health/live and /health/ready: the public listener's (load balancers probe without a token; /metrics
// needs METRICS_TOKEN) and the admin listener's (behind the operator token, with the reasons of failing checks).
// docs/operations.md, "Metrics and health".
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Chains } from '../chains/registry.ts';
import type { JobRunner } from '../core/jobs.ts';
import type { Database } from '../db/client.ts';
import { AppError, UnauthenticatedError } from '../errors/app-error.ts';
import { labelRoute } from '../http/route-label.ts';
import { errorBody, sendJson } from '../http/io.ts';
import { chainsCheck, databaseCheck, jobsCheck, migrationsCheck, Readiness, type ReadinessCheck } from './health.ts';
import { httpMetrics } from './http-metrics.ts';
import type { MetricsRegistry } from './metrics.ts';

const PATHS = new Set(['/metrics', '/health/live', '/health/ready']);
const NO_STORE = { 'cache-control': 'no-store' };
const sha = (s: string) => createHash('sha256').update(s).digest();

export interface OpsEndpointOptions {
  /**
   * Who may read /metrics: `listener` (whoever reached this listener: the admin API checked its operator token), or
   * the holder of `token` (unset: /metrics answers 404, as if it did not exist).
   */
  metricsAccess: 'listener' | { token: string | undefined };
  /** Name why a check fails (admin listener); otherwise only check names and states. */
  details: boolean;
}

/** Answers the request when it is one of the three paths (GET or HEAD); false otherwise. */
export type OpsHandler = (req: IncomingMessage, res: ServerResponse, pathname: string, requestId: string) => Promise<boolean>;

export function opsEndpoints(metrics: MetricsRegistry, readiness: Readiness, options: OpsEndpointOptions): OpsHandler {
  const expected = options.metricsAccess === 'listener' ? null : options.metricsAccess.token === undefined ? undefined : sha(options.metricsAccess.token);
  return async (req, res, pathname, requestId) => {
    if (!PATHS.has(pathname) || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    labelRoute(res, pathname);
    if (pathname === '/health/live') {
      sendJson(res, 200, { status: 'ok' }, NO_STORE);
      return true;
    }
    if (pathname === '/health/ready') {
      const report = await readiness.evaluate();
      const failing = report.checks.filter((c) => c.state !== 'ok');
      sendJson(
        res,
        report.ready ? 200 : 503,
        {
          status: report.ready ? 'ready' : 'not_ready',
          checks: Object.fromEntries(report.checks.map((c) => [c.name, c.state])),
          ...(options.details && failing.length ? { details: Object.fromEntries(failing.map((c) => [c.name, c.detail])) } : {}),
        },
        NO_STORE,
      );
      return true;
    }
    if (expected === undefined) {
      const error = new AppError('NOT_FOUND', `No route for ${req.method} ${pathname}`);
      sendJson(res, error.status, errorBody(error, requestId));
      return true;
    }
    if (expected !== null) {
      // Both sides hashed: equal lengths for timingSafeEqual, and no timing hint of the token's length.
      const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      if (!m || !timingSafeEqual(sha(m[1]!), expected)) {
        const error = new UnauthenticatedError('`Authorization: Bearer <METRICS_TOKEN>` is required');
        sendJson(res, error.status, errorBody(error, requestId), { 'www-authenticate': 'Bearer' });
        return true;
      }
    }
    const text = await metrics.text();
    res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), ...NO_STORE });
    res.end(req.method === 'HEAD' ? undefined : text);
    return true;
  };
}

export interface ServerOpsDeps {
  /** Readiness checks of the features (the rates'). */
  checks?: ReadinessCheck[];
  metrics: MetricsRegistry;
  database: Database;
  jobs: JobRunner;
  chains: Chains;
  metricsToken: string | undefined;
}

export interface ServerOps {
  metrics: MetricsRegistry;
  readiness: Readiness;
  /** Counts a request of the public listener once answered (call as it arrives). */
  observe: (req: IncomingMessage, res: ServerResponse) => void;
  /** The public listener's endpoints. */
  serve: OpsHandler;
  /** The admin listener's: /metrics without METRICS_TOKEN, failing checks with their reasons. */
  serveAdmin: OpsHandler;
}

/** The server's metrics of its own (database, pool, jobs), its readiness checks and its endpoints. */
export function serverOps({ metrics, database, jobs, chains, metricsToken, checks = [] }: ServerOpsDeps): ServerOps {
  metrics.gauge({
    name: 'payrail_database_info',
    help: 'The database this process uses: kind postgres, or pglite (embedded: one connection inside the process, no pool).',
    labelNames: ['kind'],
    collect: () => [{ labels: { kind: database.kind }, value: 1 }],
  });
  const pool = database.pool;
  if (pool) {
    metrics.gauge({
      name: 'payrail_db_pool_connections',
      help: "Connections of the server's PostgreSQL pool, idle or in use.",
      labelNames: ['state'],
      collect: () => {
        const use = pool();
        return [
          { labels: { state: 'idle' }, value: use.idle },
          { labels: { state: 'in_use' }, value: use.total - use.idle },
        ];
      },
    });
    metrics.gauge({
      name: 'payrail_db_pool_size',
      help: "The most connections the server's PostgreSQL pool opens (DB_POOL_SIZE).",
      labelNames: [],
      collect: () => [{ labels: {}, value: pool().max }],
    });
    metrics.gauge({
      name: 'payrail_db_pool_waiting',
      help: "Queries waiting for a connection of the server's PostgreSQL pool (above 0 for long: DB_POOL_SIZE is too small or the database is slow).",
      labelNames: [],
      collect: () => [{ labels: {}, value: pool().waiting }],
    });
  }
  metrics.gauge({
    name: 'payrail_job_running',
    help: 'Background jobs of this process (sweepers, senders, the webhook worker, chain watchers): 1 running, 0 stopped.',
    labelNames: ['job'],
    collect: () => jobs.jobs.map((j) => ({ labels: { job: j.name }, value: j.running() ? 1 : 0 })),
  });
  const readiness = new Readiness([databaseCheck(database.prisma), migrationsCheck(database.prisma), jobsCheck(jobs), chainsCheck(chains), ...checks]);
  return {
    metrics,
    readiness,
    observe: httpMetrics(metrics),
    serve: opsEndpoints(metrics, readiness, { metricsAccess: { token: metricsToken }, details: false }),
    serveAdmin: opsEndpoints(metrics, readiness, { metricsAccess: 'listener', details: true }),
  };
}
