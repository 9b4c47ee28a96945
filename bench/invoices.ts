// `npm run bench`: invoice create/read throughput of the real server on PostgreSQL and PGlite, next to a
// bare node:http baseline that replays the same SQL with the raw driver (see sql.ts, baseline.ts), and the
// rate of confirmed payments applied to invoices (payments.ts).
//
// Env: BENCH_DATABASE_URL  server to create the throw-away database on (default postgres@127.0.0.1:5432)
//      BENCH_DURATION      seconds per measured run (default 8), BENCH_WARMUP seconds before each (default 1.5)
//      BENCH_ONLY          postgres | pglite, to run one database only
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { startApp, type App } from '../src/app.ts';
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { PGliteAdapterFactory, openPGlite } from '../src/db/adapters.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import { createLogger } from '../src/logger.ts';
import { insertBaselineCompany, pgBackend, pgliteBackend, startBaseline, type BaselineServer, type SqlBackend } from './baseline.ts';
import { captureStatements, compareStatements } from './capture.ts';
import { CREATE_BODY, DEFAULT_SERVER_URL, GQL_CREATE, createBenchDatabase, gqlRead, log, seed } from './common.ts';
import { measure, type LoadSettings, type LoadTarget } from './load.ts';
import { benchPayments, type PaymentSettings } from './payments.ts';
import { problems, renderReport, verdicts, type DbKind, type DbResult, type RunKey } from './report.ts';

const POOL_SIZE = 10;
const READ_IDS = 300;
const TIME_BUDGET_MS = 6 * 60_000;

const settings: LoadSettings = {
  connections: 50,
  durationSec: Number(process.env['BENCH_DURATION'] ?? 8),
  warmupSec: Number(process.env['BENCH_WARMUP'] ?? 1.5),
};

const paymentSettings: PaymentSettings = {
  connections: settings.connections,
  durationSec: settings.durationSec,
  warmupInvoices: 250,
  warmupSec: settings.warmupSec,
  rounds: 3,
  maxInvoices: 5000,
  prepareConcurrency: 16,
};

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
    const { test: { publicToken } } = await createCompany(app.db.prisma, { name: 'Bench' });
    const auth = { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' };

    backend = await section.openBaseline();
    baseline = await startBaseline(backend, await insertBaselineCompany(backend));

    log(`${section.db}: seeding ${READ_IDS} invoices per server for the read runs`);
    const serviceIds = await seed(`${app.url}/api/invoices/v1/regular`, auth, READ_IDS);
    const baselineIds = await seed(`${baseline.url}/create`, { 'content-type': 'application/json' }, READ_IDS);

    if (section.db === 'postgres') result.statementCheck = await checkStatements(app.url, auth, serviceIds[0]!);

    const json = { 'content-type': 'application/json' };
    const restCreate: LoadTarget = { url: `${app.url}/api/invoices/v1/regular`, method: 'POST', headers: auth, body: CREATE_BODY };
    const targets: [RunKey, LoadTarget][] = [
      ['ceilingInsert', { url: `${baseline.url}/insert`, method: 'POST', headers: json, body: CREATE_BODY }],
      ['baselineCreate', { url: `${baseline.url}/create`, method: 'POST', headers: json, body: CREATE_BODY }],
      ['restCreate', restCreate],
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
    // Last: it leaves paid invoices and ledger rows behind.
    result.payments = await benchPayments(app, auth, paymentSettings, section.db, restCreate);
  } finally {
    // Close in reverse order; a failing close must not hide the others.
    await baseline?.stop().catch((e: unknown) => log(`baseline stop: ${String(e)}`));
    await backend?.close().catch((e: unknown) => log(`baseline db close: ${String(e)}`));
    await app?.stop().catch((e: unknown) => log(`service stop: ${String(e)}`));
  }
}

/**
 * One request of each kind with pg wrapped, compared with bench/sql.ts. The capture sees every statement of the
 * process, so a background job (the expiry sweeper, the refund sender) running at that moment shows up in it:
 * a mismatch is captured again, up to 3 times; real drift mismatches every time, and then fails the run.
 */
async function checkStatements(url: string, auth: Record<string, string>, id: string) {
  const post = (path: string, body: string) => async () => void (await (await fetch(`${url}${path}`, { method: 'POST', headers: auth, body })).text());
  const get = (path: string) => async () => void (await (await fetch(`${url}${path}`)).text());
  const check = async (label: string, operation: Parameters<typeof compareStatements>[1], request: () => Promise<void>) => {
    let result = compareStatements(label, operation, await captureStatements(request));
    for (let attempt = 2; !result.ok && attempt <= 3; attempt++) result = compareStatements(label, operation, await captureStatements(request));
    return result;
  };
  return [
    await check('REST create', 'create', post('/api/invoices/v1/regular', CREATE_BODY)),
    await check('GraphQL create', 'create', post('/graphql', GQL_CREATE)),
    await check('REST read', 'restRead', get(`/api/invoices/v1/regular/${id}`)),
    await check('GraphQL read', 'graphqlRead', post('/graphql', gqlRead(id))),
  ];
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
        const { client: db } = await openPGlite('pglite:memory://', 'bench');
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
    settings: { ...settings, dbPoolSize: POOL_SIZE, readIds: READ_IDS, payments: paymentSettings },
    results,
    targets: verdicts(results),
    problems: problems(results),
  };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${file.pathname} (${report.elapsedSec} s)`);
  // Errors and failed checks fail the run; missed speed targets do not.
  return problems(results).length ? 1 : 0;
}

// Everything below is bounded; this is the last resort if a close hangs.
setTimeout(() => {
  log(`time budget of ${TIME_BUDGET_MS / 1000} s exceeded; exiting`);
  process.exit(2);
}, TIME_BUDGET_MS).unref();

process.exitCode = await main();
