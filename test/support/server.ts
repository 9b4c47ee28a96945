import { afterAll, beforeAll } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { createCompany, type CompanyCredentials } from '../../src/companies/service.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { checkApiExchange, currentContract } from './contract.ts';
import { freshDatabase, type DbKind, type TestDatabase } from './databases.ts';

export interface TestServer {
  readonly app: App;
  readonly url: string;
  /** The server's log lines (pino JSON objects) at `logLevel` and above, when useServer was given one. */
  readonly logs: Record<string, unknown>[];
  /** Where its database is (a test may open it while the server is down, see restart). */
  readonly databaseUrl: string;
  /** Stops the server (its jobs finish their pass) and starts it again on the same database; `between` runs while it is down. */
  restart(between?: () => Promise<void>): Promise<void>;
  /** A new merchant with its credentials (created like the CLI does); `publicToken` and `secretKey` are test mode's. */
  merchant(input?: Record<string, unknown>): Promise<TestMerchant>;
  /** The same, with live mode's credentials at the top (real nodes; docs/modes.md). */
  liveMerchant(input?: Record<string, unknown>): Promise<TestMerchant>;
  /** fetch against the server; JSON bodies are serialised, responses parsed, /api/ answers checked against the OpenAPI document. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<TestResponse>;
}

/**
 * A merchant account; one mode's credentials also at the top (test mode's unless made by liveMerchant), and that
 * mode's tenant id (the `companyId` of its rows; the account id for test mode).
 */
export interface TestMerchant extends CompanyCredentials {
  publicToken: string;
  secretKey: string;
  tenantId: string;
}

export const testMerchant = (c: CompanyCredentials): TestMerchant => ({ ...c, publicToken: c.test.publicToken, secretKey: c.test.secretKey, tenantId: c.companyId });

export interface RequestOptions {
  token?: string;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // Tests read whatever shape the endpoint returns.
  body: any;
  text: string;
}

export interface ServerOptions {
  /** Record the server's log lines at this level and above in `server.logs` (they are silent otherwise). */
  logLevel?: string;
}

/** Starts the real server on a random port with a fresh database for the enclosing describe block. */
export function useServer(kind: DbKind, env: Record<string, string> = {}, options: ServerOptions = {}): TestServer {
  let app: App | undefined;
  let db: TestDatabase | undefined;
  let start: (() => Promise<App>) | undefined;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    // Compiled before the server starts: the pause would otherwise hold up the server this process also runs.
    currentContract();
    db = await freshDatabase(kind);
    const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '5', PAY_URL: 'https://checkout.example/pay', ...env });
    const logger = options.logLevel ? createLogger(options.logLevel, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) }) : createLogger(config.logLevel);
    start = () => startApp(config, logger);
    app = await start();
  });
  afterAll(async () => {
    await app?.stop();
    await db?.drop();
  });
  const server: TestServer = {
    get app() {
      if (!app) throw new Error('server not started');
      return app;
    },
    get url() {
      return server.app.url;
    },
    logs,
    get databaseUrl() {
      if (!db) throw new Error('server not started');
      return db.url;
    },
    async restart(between) {
      await server.app.stop();
      app = undefined;
      await between?.();
      app = await start!();
    },
    merchant: async (input = {}) => testMerchant(await createCompany(server.app.db.prisma, { name: 'Test Merchant', ...input })),
    async liveMerchant(input = {}) {
      const c = await createCompany(server.app.db.prisma, { name: 'Live Merchant', ...input });
      const tenant = await server.app.db.prisma.company.findUniqueOrThrow({ where: { accountId_mode: { accountId: c.companyId, mode: 'live' } } });
      return { ...c, publicToken: c.live.publicToken, secretKey: c.live.secretKey, tenantId: tenant.id };
    },
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers['authorization'] = `Bearer ${options.token}`;
      let body = options.body;
      if (options.json !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = JSON.stringify(options.json);
      }
      const res = await fetch(`${server.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(15_000) });
      const text = await res.text();
      checkApiExchange({ method, path, status: res.status, contentType: res.headers.get('content-type'), text });
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    graphql: (query, variables, token) => server.request('POST', '/graphql', { json: { query, variables }, token }),
  };
  return server;
}

export const sampleInvoice = (overrides: Record<string, unknown> = {}) => ({
  invoiceCurrency: 'usd',
  items: [
    { name: 'Coffee', price: 4.5 },
    { name: 'Cake', price: 3.25 },
  ],
  ...overrides,
});
