import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { TokenAuthenticator } from './core/auth.ts';
import { AuthThrottle } from './core/auth-throttle.ts';
import { UnauthenticatedError } from './errors/app-error.ts';
import type { Platform, Services } from './core/feature.ts';
import { pruneIdempotencyKeys } from './core/idempotency.ts';
import { intervalJob, JobRunner } from './core/jobs.ts';
import type { Database } from './db/client.ts';
import { apiReference, assemble, graphqlSchema, printedSchema } from './features.ts';
import { schemaFile } from './graphql/schema-file.ts';
import { graphiqlPage } from './graphql/graphiql.ts';
import { buildYoga } from './graphql/yoga.ts';
import { attachGraphqlWs } from './graphql/ws.ts';
import { LiveLimits, SseStreams } from './graphql/live-limits.ts';
import { LiveSessions } from './graphql/live-sessions.ts';
import { CREDENTIALS_CHANGED } from './domain/event-types.ts';
import { loadWebAssets } from './web/assets.ts';
import { createWebPages } from './web/pages.ts';
import { openPaymentLinkFor } from './payment-links/service.ts';
import { dashboardSessions } from './web/session.ts';
import { clientAddress } from './http/client-address.ts';
import { checkDeclaredLength, clientError, errorHeaders } from './http/edge.ts';
import { errorBody, sendJson } from './http/io.ts';
import { createRestHandler } from './http/rest.ts';
import { labelRoute } from './http/route-label.ts';
import { Router, type Route } from './http/router.ts';
import { verifyLedger } from './ledger/verify.ts';
import type { Logger } from './logger.ts';
import { serverOps, type ServerOps } from './ops/endpoints.ts';
import { MetricsRegistry } from './ops/metrics.ts';
import { openPlatform } from './platform.ts';
import { DRAIN_SHARE } from './shutdown.ts';
import { ratesCheck } from './pricing/rates.ts';

export interface App {
  config: Config;
  logger: Logger;
  db: Database;
  platform: Platform;
  services: Services;
  /** Every REST route the public listener serves (the features' and the document's). */
  routes: Route<Services>[];
  jobs: JobRunner;
  auth: TokenAuthenticator;
  server: Server;
  url: string;
  /** Metrics and readiness (also served by the admin listener). */
  ops: ServerOps;
  stop(): Promise<void>;
}

export { apiRoutes } from './features.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const IDEMPOTENCY_PRUNE_INTERVAL_MS = 3_600_000;

// The public API is called from checkout pages on other origins; tokens travel in headers, never cookies.
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type, idempotency-key, x-request-id',
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
  'access-control-expose-headers': 'x-request-id, idempotent-replayed, payrail-mode',
  'access-control-max-age': '600',
};

/** A request's URL for the log: an export download link's token is a credential, so it is left out. */
export const withoutSecrets = (url: string | undefined) => url?.replace(/^\/api\/exports\/[^/?#]+/, '/api/exports/<token>');

export interface StartOptions {
  /** Runs on the open database before the server accepts connections. */
  beforeListen?: (db: Database['prisma']) => Promise<void>;
}

/** Opens the platform, assembles the features, starts their jobs and listens. */
export async function startApp(config: Config, logger: Logger, options: StartOptions = {}): Promise<App> {
  // One registry per server: several servers in one process (tests) never share series.
  const metrics = new MetricsRegistry(logger);
  // With CHAIN_WORKER=0 this process never loads the signer: the chains worker watches, sends and consolidates.
  const platform = await openPlatform(config, logger, { role: 'server', signer: config.chainWorker, chainWork: config.chainWorker, metrics });
  const assembled = assemble(config, platform);
  const { services } = assembled;
  const jobs = new JobRunner([
    ...assembled.jobs.filter((job) => config.chainWorker || !job.onChain),
    // The real chains' watchers (one process per network scans at a time: each holds a lease); with CHAIN_WORKER=0,
    // what tells this server how the worker's scans go.
    ...platform.chains.jobs(),
    intervalJob('idempotency-pruner', IDEMPOTENCY_PRUNE_INTERVAL_MS, () => pruneIdempotencyKeys(platform), logger),
  ]);
  jobs.start();
  const ops = serverOps({
    metrics,
    database: platform.database,
    jobs,
    chains: platform.chains,
    metricsToken: config.metricsToken,
    checks: [ratesCheck(services.invoices.rates, (network, mode) => platform.chains.isOffered(network, mode))],
  });
  const auth = new TokenAuthenticator(platform.db, config.sandbox, undefined, undefined, (e) => logger.warn({ err: e }, 'could not record an API key’s lastUsedAt'));
  const addressOf = (req: IncomingMessage) => clientAddress(req, config.trustProxyHops);
  /** A failed authentication of `req`'s client: answered late, or 429 past the limit. */
  const failedAuthentication = async (req: IncomingMessage) => {
    const { delayMs, refusal } = throttle.failed(addressOf(req));
    if (refusal) throw refusal;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  };
  const throttle = new AuthThrottle({ slowdownAfter: config.authFailuresSlowdown, blockAfter: config.authFailuresBlock, blockMs: config.authBlockSeconds * 1000 });
  // Every surface authenticates here: REST, GraphQL over HTTP and SSE, and graphql-ws connections. A failure counts
  // against the client address (slowed, then 429); a valid token always passes (docs/security.md, "Brute force").
  const session = async (authorization: string | undefined, req: IncomingMessage) => {
    try {
      return await auth.session(authorization, req.headers.cookie);
    } catch (e) {
      if (!(e instanceof UnauthenticatedError)) throw e;
      await failedAuthentication(req);
      throw e;
    }
  };

  const yoga = buildYoga({
    schema: graphqlSchema(),
    services,
    session,
    clientAddress: addressOf,
    introspection: config.graphqlIntrospection,
    logger,
  });
  // The contract of these routes (/api/openapi.json is one of them) and its reference page (/api/docs).
  const reference = apiReference(assembled.routes);
  const routes = [...assembled.routes, ...reference.routes];
  const rest = createRestHandler(new Router<Services>().add(...routes), services, {
    bodyLimitBytes: config.bodyLimitBytes,
    session: (req) => session(req.headers.authorization, req),
    clientAddress: addressOf,
    logger,
    headers: CORS_HEADERS,
  });

  // The checkout page and the dashboard: built at install; rebuilt here when their sources are newer (development).
  const assets = await loadWebAssets({ buildIfStale: true }).catch((e: unknown) => {
    logger.warn({ err: e }, 'the checkout page and the dashboard could not be built: they answer 503 (run npm run build)');
    return null;
  });
  const pages = createWebPages({
    db: platform.db,
    logger,
    payPath: new URL(config.payUrl).pathname.replace(/\/+$/, ''),
    assets,
    openLink: (id, req) => openPaymentLinkFor(services.paymentLinks, id, addressOf(req)),
  });
  const liveLimits = new LiveLimits({
    maxConnectionsPerIp: config.liveMaxConnectionsPerIp,
    maxConnectionsPerMerchant: config.liveMaxConnectionsPerMerchant,
    maxSubscriptionsPerConnection: config.liveMaxSubscriptionsPerConnection,
  });
  // Live connections remember what they authenticated with: when a company's credentials change (on any instance,
  // or a CLI on the database), the bus tells every instance, which drops the cached lookups and ends the
  // connections whose credential no longer holds (docs/live.md, "Credentials that stop holding").
  const liveSessions = new LiveSessions(auth, logger);
  // This process's own change (a key revoked here) empties the cache before its answer is sent: refused at once.
  platform.onCommitted((types) => {
    if (types.includes(CREDENTIALS_CHANGED)) auth.invalidate();
  });
  platform.bus.subscribe((m) => {
    if (m.type !== CREDENTIALS_CHANGED) return;
    auth.forget(m.companyId);
    void liveSessions.credentialsChanged(m.companyId);
  });
  const sessions = dashboardSessions({ db: platform.db, auth, events: platform.commits, secure: config.publicBaseUrl.startsWith('https:'), logger, failed: failedAuthentication });
  const sseStreams = new SseStreams(liveLimits, session, addressOf, liveSessions);
  const graphiql = config.graphiql ? graphiqlPage('/graphql') : null;
  const schemaText = schemaFile(printedSchema);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    ops.observe(req, res);
    res.on('finish', () => {
      logger.debug({ requestId, method: req.method, url: withoutSecrets(req.url), status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
    });
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (await ops.serve(req, res, url.pathname, requestId)) return;
    if (graphiql?.(req, res, url)) return;
    if (schemaText(req, res, url)) return;
    if (url.pathname === '/graphql') {
      labelRoute(res, '/graphql');
      try {
        checkDeclaredLength(req.headers, config.bodyLimitBytes, { required: req.method === 'POST' });
      } catch (e) {
        const error = clientError(e, (err) => logger.error({ err }, 'graphql edge failed'));
        return sendJson(res, error.status, errorBody(error, requestId), errorHeaders(error));
      }
      // An SSE stream is a live connection: it counts against the same limits as a WebSocket while it is open.
      if (String(req.headers.accept ?? '').includes('text/event-stream')) {
        const admission = await sseStreams.admit(req, res);
        const { refused } = admission;
        if (refused) return sendJson(res, refused.status, errorBody(refused, requestId), errorHeaders(refused));
        return yoga(req, res, { req, requestId, liveEnded: admission.ended });
      }
      return yoga(req, res, { req, requestId });
    }
    if (url.pathname === '/health') {
      labelRoute(res, '/health');
      // Chains that are off or failing make the service degraded, not down: their currencies are refused meanwhile.
      const chains = platform.chains.health();
      const degraded = chains.some((c) => c.live === 'node' && c.state !== 'ok');
      return sendJson(res, 200, { status: degraded ? 'degraded' : 'ok', chains });
    }
    if (await sessions(req, res, url.pathname, requestId)) return;
    if (!url.pathname.startsWith('/api/') && (await pages(req, res, url))) return;
    if (reference.page(req, res, url)) return;
    if (req.method === 'OPTIONS' && url.pathname.startsWith('/api/')) {
      res.writeHead(204, CORS_HEADERS);
      return res.end();
    }
    return rest(req, res, url, requestId);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      logger.error({ err: e }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, errorBody(clientError(e, () => {}), ''));
      else res.destroy();
    });
  });
  const live = attachGraphqlWs(server, yoga, {
    path: '/graphql',
    authenticate: session,
    sessions: liveSessions,
    limits: liveLimits,
    idleTimeoutMs: config.liveIdleTimeoutMs,
    maxPayloadBytes: config.bodyLimitBytes,
    hideSuggestions: !config.graphqlIntrospection,
    clientAddress: addressOf,
    logger,
  });
  metrics.gauge({
    name: 'payrail_live_connections',
    help: 'Live connections open on this server, by transport: graphql_ws (WebSockets) and sse (server-sent event streams).',
    labelNames: ['transport'],
    collect: () => [
      { labels: { transport: 'graphql_ws' }, value: live.connections },
      { labels: { transport: 'sse' }, value: sseStreams.size },
    ],
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;

  const shutDown = async () => {
    await jobs.stop();
    await assembled.close();
    await yoga.dispose();
    await platform.close();
  };
  try {
    await options.beforeListen?.(platform.db);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await shutDown();
    throw e;
  }
  if (platform.database.uncleanShutdown) checkAfterUncleanShutdown(platform.database, logger);
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish (bounded), then the jobs, then the database. Live
      // subscriptions end at once (WebSockets with 1001, SSE streams closed), so clients reconnect to another instance.
      await live.close();
      sseStreams.closeAll();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs * DRAIN_SHARE);
      await closed;
      clearTimeout(timer);
      await shutDown();
    })());

  return { config, logger, db: platform.database, platform, services, routes, jobs, auth, server, url, ops, stop };
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
