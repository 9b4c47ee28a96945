import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxRegistry } from './chains/sandbox.ts';
import { Clock } from './clock.ts';
import { companyRoutes, type CompanyRestContext } from './companies/rest.ts';
import { dispatchQueuedRefunds } from './payments/decisions.ts';
import { applyTransferReport, sweepExpired, type PaymentDeps } from './payments/processor.ts';
import { sandboxRoutes, type SandboxRestContext } from './sandbox/rest.ts';
import type { SandboxDeps } from './sandbox/service.ts';
import { webhookRoutes, type WebhookRestContext } from './webhooks/rest.ts';
import { createWebhookRuntime } from './webhooks/runtime.ts';
import { pruneDeliveries } from './webhooks/service.ts';
import { verifyLedger } from './ledger/verify.ts';
import { TokenAuthenticator } from './companies/service.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { AppError } from './errors/app-error.ts';
import { buildYoga } from './graphql/yoga.ts';
import { errorBody, sendJson } from './http/io.ts';
import { createRestHandler } from './http/rest.ts';
import { Router, type Route } from './http/router.ts';
import { invoiceRoutes, type InvoiceRestContext } from './invoices/rest.ts';
import type { InvoiceDeps } from './invoices/service.ts';
import type { Logger } from './logger.ts';
import { DRAIN_SHARE } from './shutdown.ts';
import { defaultFeeTable, loadFeeTable } from './pricing/fees.ts';
import { StaticRateSource } from './pricing/rates.ts';

export interface App {
  config: Config;
  logger: Logger;
  db: Database;
  invoices: InvoiceDeps;
  payments: PaymentDeps;
  auth: TokenAuthenticator;
  server: Server;
  url: string;
  stop(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

// The public API is called from checkout pages on other origins; tokens travel in headers, never cookies.
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type, idempotency-key, x-request-id',
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, OPTIONS',
  'access-control-expose-headers': 'x-request-id, idempotent-replayed',
  'access-control-max-age': '600',
};

/** Opens the database, wires services and starts listening. */
export interface StartOptions {
  /** Runs on the open database before the server accepts connections. */
  beforeListen?: (db: Database['prisma']) => Promise<void>;
}

export async function startApp(config: Config, logger: Logger, options: StartOptions = {}): Promise<App> {
  const db = await openDatabase({
    url: config.databaseUrl,
    poolSize: config.dbPoolSize,
    role: 'server',
    onPoolError: (e) => logger.warn({ err: e }, 'database connection lost; the pool reconnects'),
  });
  const clock = new Clock(db.prisma, config.sandbox);
  const chains = sandboxRegistry({ sendFailures: config.sandboxSendFailures });
  const webhooks = createWebhookRuntime(config, db.prisma, clock, logger, config.webhooks.inProcess);
  const notify = webhooks.deps.wake;
  const payments: PaymentDeps = { db: db.prisma, clock, chains, notify };
  chains.onTransfer((report) => applyTransferReport(payments, report));
  const sandbox: SandboxDeps = { ...payments, sandbox: config.sandbox ? chains : null };
  const invoices: InvoiceDeps = {
    db: db.prisma,
    rates: config.ratesFile ? StaticRateSource.fromFile(config.ratesFile) : new StaticRateSource(),
    fees: config.feesFile ? loadFeeTable(config.feesFile) : defaultFeeTable(),
    chains,
    clock,
    notify,
  };
  const auth = new TokenAuthenticator(db.prisma);
  const authenticate = (token: string) => auth.authenticate(token);
  const jobs = startJobs(config, logger, payments, webhooks);

  const yoga = buildYoga({
    base: { prisma: db.prisma, invoices, payments, sandbox, webhooks: webhooks.deps, payUrl: config.payUrl, logger },
    authenticate,
    graphiql: config.graphiql,
    introspection: config.introspection,
    logger,
  });
  const restContext: RestContext = { invoices, payments, sandbox, logger, db: db.prisma, webhooks: webhooks.deps };
  const router = new Router<RestContext>().add(...apiRoutes);
  const rest = createRestHandler(router, restContext, {
    bodyLimitBytes: config.bodyLimitBytes,
    authenticate,
    logger,
    headers: CORS_HEADERS,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.debug({ requestId, method: req.method, url: req.url, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
    });
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/graphql') {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > config.bodyLimitBytes) {
        res.setHeader('connection', 'close');
        return sendJson(res, 413, errorBody(new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${config.bodyLimitBytes} bytes`), requestId));
      }
      if (req.method === 'POST' && req.headers['content-length'] === undefined) {
        return sendJson(res, 411, errorBody(new AppError('LENGTH_REQUIRED', 'Send a Content-Length header with GraphQL POST requests'), requestId));
      }
      return yoga(req, res, { req, requestId });
    }
    if (url.pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'OPTIONS' && url.pathname.startsWith('/api/')) {
      res.writeHead(204, CORS_HEADERS);
      return res.end();
    }
    return rest(req, res, url, requestId);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      logger.error({ err: e }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, errorBody(new AppError('INTERNAL', 'Internal error'), ''));
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;

  try {
    await options.beforeListen?.(db.prisma);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await jobs.stop();
    await db.close();
    throw e;
  }
  if (db.uncleanShutdown) checkAfterUncleanShutdown(db, logger);
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish (bounded), then close the database.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs * DRAIN_SHARE);
      await closed;
      clearTimeout(timer);
      await jobs.stop();
      await yoga.dispose();
      await db.close();
    })());

  return { config, logger, db, invoices, payments, auth, server, url, stop };
}

/**
 * The embedded database's previous process left without closing it. PGlite replays its write-ahead log on open
 * (acknowledged commits survive a killed process); the ledger check says whether the money still adds up.
 */
function checkAfterUncleanShutdown(db: Database, logger: Logger): void {
  logger.warn(
    { previous: db.uncleanShutdown },
    'the embedded database was not closed by its previous process (kill -9, crash or power loss); it was recovered from its write-ahead log; checking the ledger',
  );
  verifyLedger(db.prisma).then(
    (report) =>
      report.ok
        ? logger.info({ journals: report.journals }, 'ledger verified after the unclean shutdown')
        : logger.error(
            { problems: report.problems.slice(0, 20) },
            'the ledger does not hold after the unclean shutdown: stop the server, run npm run ledger:verify and restore the data directory from a backup (docs/operations.md)',
          ),
    (e: unknown) => logger.error({ err: e }, 'could not verify the ledger after the unclean shutdown'),
  );
}

type RestContext = InvoiceRestContext & CompanyRestContext & SandboxRestContext & WebhookRestContext;

/** Every REST route of the public API listener. */
export const apiRoutes: Route<RestContext>[] = [...invoiceRoutes, ...companyRoutes, ...sandboxRoutes, ...webhookRoutes];

/**
 * Background work inside the server process: the expiry sweeper and the refund sender. Both keep their
 * state in the database, so a restart resumes them; runs never overlap.
 */
function startJobs(config: Config, logger: Logger, payments: PaymentDeps, webhooks: { stop(): Promise<void> }) {
  const running = new Set<Promise<unknown>>();
  const every = (ms: number, name: string, job: () => Promise<unknown>) => {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      const run = job()
        .catch((e: unknown) => logger.error({ err: e, job: name }, 'background job failed'))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    };
    const timer = setInterval(tick, ms);
    timer.unref();
    tick();
    return timer;
  };
  const timers = [
    every(config.sweepIntervalMs, 'expiry-sweeper', () => sweepExpired(payments)),
    every(config.refundRetryIntervalMs, 'refund-sender', () => dispatchQueuedRefunds(payments, logger)),
    every(config.webhooks.pruneIntervalMs, 'webhook-pruner', () =>
      pruneDeliveries(payments.db, new Date(Date.now() - config.webhooks.retentionDays * 86_400_000)),
    ),
  ];
  return {
    async stop() {
      timers.forEach(clearInterval);
      await Promise.allSettled([...running]);
      await webhooks.stop();
    },
  };
}
