// `npm run bench`: invoice create/read throughput of the real server on PostgreSQL and PGlite, next to a
// bare node:http baseline that replays the same SQL with the raw driver (see sql.ts, baseline.ts).
//
// Env: BENCH_DATABASE_URL  server to create the throw-away database on (default postgres@127.0.0.1:5432)
//      BENCH_DURATION      seconds per measured run (default 8), BENCH_WARMUP seconds before each (default 1.5)
//      BENCH_ONLY          postgres | pglite, to run one database only
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { startApp, type App } from '../src/app.ts';
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { PGliteAdapterFactory, openPGlite } from '../src/db/adapters.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import { createLogger } from '../src/logger.ts';
import { insertBaselineCompany, pgBackend, pgliteBackend, startBaseline, type BaselineServer, type SqlBackend } from './baseline.ts';
import { captureStatements, compareStatements } from './capture.ts';
import { measure, type LoadSettings, type LoadTarget } from './load.ts';
import { renderReport, verdicts, type DbKind, type DbResult, type RunKey } from './report.ts';

const POOL_SIZE = 10;
const READ_IDS = 300;
const TIME_BUDGET_MS = 6 * 60_000;
const DEFAULT_SERVER_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

const settings: LoadSettings = {
  connections: 50,
  durationSec: Number(process.env['BENCH_DURATION'] ?? 8),
  warmupSec: Number(process.env['BENCH_WARMUP'] ?? 1.5),
};

const CREATE_BODY = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }, { name: 'Cake', price: 3.25 }] });
// The success member of CreateInvoiceResult (named MutationCreateInvoiceSuccess before the schema review).
const GQL_CREATE = JSON.stringify({
  query: 'mutation($i: CreateInvoiceInput!){ createInvoice(input:$i){ __typename ... on CreateInvoiceSuccess { data { id status } } } }',
  variables: { i: { invoiceCurrency: 'USD', items: [{ name: 'Coffee', price: '4.5' }, { name: 'Cake', price: '3.25' }] } },
});
const GQL_READ = 'query($id: ID!){ invoice(id:$id){ id status createdAt company { name } invoiceContent { items { name price } } } }';
const gqlRead = (id: string) => JSON.stringify({ query: GQL_READ, variables: { id } });

const log = (msg: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** POSTs `count` creates, `concurrency` at a time, and returns the new invoice ids. */
async function seed(url: string, headers: Record<string, string>, count: number, concurrency = 10): Promise<string[]> {
  const ids: string[] = [];
  const worker = async () => {
    while (ids.length < count) {
      const res = await fetch(url, { method: 'POST', headers, body: CREATE_BODY, signal: AbortSignal.timeout(10_000) });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 201 || typeof body.id !== 'string') throw new Error(`seeding ${url}: ${res.status} ${JSON.stringify(body)}`);
      ids.push(body.id);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids.slice(0, count);
}

interface Section {
  db: DbKind;
  url: string;
  /** The baseline's own connection(s) to the same kind of database, migrated. */
  openBaseline: () => Promise<SqlBackend>;
}

async function benchDatabase(section: Section, result: DbResult): Promise<void> {
  let app: App | undefined;
  let backend: SqlBackend | undefined;
  let baseline: BaselineServer | undefined;
  try {
    log(`${section.db}: starting the service`);
    const config = loadConfig({ DATABASE_URL: section.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: String(POOL_SIZE) });
    app = await startApp(config, createLogger('silent'));
    const { publicToken } = await createCompany(app.db.prisma, { name: 'Bench' });
    const auth = { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' };

    backend = await section.openBaseline();
    baseline = await startBaseline(backend, await insertBaselineCompany(backend));

    log(`${section.db}: seeding ${READ_IDS} invoices per server for the read runs`);
    const serviceIds = await seed(`${app.url}/api/invoices/v1/regular`, auth, READ_IDS);
    const baselineIds = await seed(`${baseline.url}/create`, { 'content-type': 'application/json' }, READ_IDS);

    if (section.db === 'postgres') result.statementCheck = await checkStatements(app.url, auth, serviceIds[0]!);

    const json = { 'content-type': 'application/json' };
    const targets: [RunKey, LoadTarget][] = [
      ['ceilingInsert', { url: `${baseline.url}/insert`, method: 'POST', headers: json, body: CREATE_BODY }],
      ['baselineCreate', { url: `${baseline.url}/create`, method: 'POST', headers: json, body: CREATE_BODY }],
      ['restCreate', { url: `${app.url}/api/invoices/v1/regular`, method: 'POST', headers: auth, body: CREATE_BODY }],
      ['graphqlCreate', { url: `${app.url}/graphql`, method: 'POST', headers: auth, body: GQL_CREATE }],
      ['baselineRead', { url: baseline.url, method: 'GET', rotate: baselineIds.map((id) => ({ path: `/read/${id}` })) }],
      ['restRead', { url: app.url, method: 'GET', rotate: serviceIds.map((id) => ({ path: `/api/invoices/v1/regular/${id}` })) }],
      ['baselineGraphqlRead', { url: baseline.url, method: 'GET', rotate: baselineIds.map((id) => ({ path: `/read-gql/${id}` })) }],
      ['graphqlRead', { url: `${app.url}/graphql`, method: 'POST', headers: auth, rotate: serviceIds.map((id) => ({ path: '/graphql', body: gqlRead(id) })) }],
    ];
    for (const [key, target] of targets) {
      log(`${section.db}: ${key}`);
      const m = await measure(target, settings);
      result.runs[key] = m;
      log(`${section.db}: ${key} ${Math.round(m.reqPerSec)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILURES` : ''}`);
    }
  } finally {
    // Close in reverse order; a failing close must not hide the others.
    await baseline?.stop().catch((e: unknown) => log(`baseline stop: ${String(e)}`));
    await backend?.close().catch((e: unknown) => log(`baseline db close: ${String(e)}`));
    await app?.stop().catch((e: unknown) => log(`service stop: ${String(e)}`));
  }
}

/** One request of each kind with pg wrapped, compared with bench/sql.ts. */
async function checkStatements(url: string, auth: Record<string, string>, id: string) {
  const post = (path: string, body: string) => async () => void (await (await fetch(`${url}${path}`, { method: 'POST', headers: auth, body })).text());
  const get = (path: string) => async () => void (await (await fetch(`${url}${path}`)).text());
  return [
    compareStatements('create', await captureStatements(post('/api/invoices/v1/regular', CREATE_BODY))),
    compareStatements('create', await captureStatements(post('/graphql', GQL_CREATE))),
    compareStatements('restRead', await captureStatements(get(`/api/invoices/v1/regular/${id}`))),
    compareStatements('graphqlRead', await captureStatements(post('/graphql', gqlRead(id)))),
  ].map((c, i) => ({ ...c, operation: ['REST create', 'GraphQL create', 'REST read', 'GraphQL read'][i]!, observed: c.ok ? undefined : c.observed }));
}

/** Creates payrail_bench_<random> on the server; the returned drop() waits for the service's pool to go first. */
async function createBenchDatabase(serverUrl: string) {
  const admin = new pg.Client({ connectionString: serverUrl });
  admin.on('error', () => {});
  await admin.connect();
  const name = `payrail_bench_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      // pg's Pool.end() resolves before its backends are gone, and the service's pool has no 'error'
      // listener: terminating one of them with FORCE would crash this process. Wait for them instead.
      for (let i = 0; i < 50; i++) {
        const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

function gitRevision(): string | null {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'prisma'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${rev}+dirty` : rev;
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const only = process.env['BENCH_ONLY'];
  const results: DbResult[] = [];
  const started = Date.now();

  if (!only || only === 'postgres') {
    const result: DbResult = { db: 'postgres', runs: {} };
    results.push(result);
    const serverUrl = process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL;
    let database: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
    try {
      database = await createBenchDatabase(serverUrl);
      const url = database.url;
      await benchDatabase({ db: 'postgres', url, openBaseline: async () => pgBackend(url, POOL_SIZE) }, result);
    } catch (e) {
      result.error = e instanceof Error ? (e.stack ?? e.message) : String(e);
      log(`postgres section failed: ${result.error}`);
    } finally {
      await database?.drop().catch((e: unknown) => log(`dropping the bench database failed: ${String(e)}`));
    }
  }

  if (!only || only === 'pglite') {
    const result: DbResult = { db: 'pglite', runs: {} };
    results.push(result);
    try {
      // The baseline gets its own in-memory PGlite (one instance cannot be shared with Prisma's adapter).
      const openBaseline = async () => {
        const db = await openPGlite('pglite:memory://');
        await applyMigrations(new PGliteAdapterFactory(db));
        return pgliteBackend(db);
      };
      await benchDatabase({ db: 'pglite', url: 'pglite:memory://', openBaseline }, result);
    } catch (e) {
      result.error = e instanceof Error ? (e.stack ?? e.message) : String(e);
      log(`pglite section failed: ${result.error}`);
    }
  }

  console.log(renderReport(results, settings));

  const resultsDir = new URL('./results/', import.meta.url);
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = new URL('latest.json', resultsDir);
  const report = {
    finishedAt: new Date().toISOString(),
    elapsedSec: Math.round((Date.now() - started) / 1000),
    git: gitRevision(),
    node: process.version,
    cpus: os.cpus().length,
    settings: { ...settings, dbPoolSize: POOL_SIZE, readIds: READ_IDS },
    results,
    targets: verdicts(results),
  };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${file.pathname} (${report.elapsedSec} s)`);
  return results.some((r) => r.error) ? 1 : 0;
}

// Everything below is bounded; this is the last resort if a close hangs.
setTimeout(() => {
  log(`time budget of ${TIME_BUDGET_MS / 1000} s exceeded; exiting`);
  process.exit(2);
}, TIME_BUDGET_MS).unref();

process.exitCode = await main();
