// `npm run bench` (rates): proceed with live rates costs no more than with the static table, because rates come from
// memory (docs/rates.md). Two servers in this process on PostgreSQL, one on the static table (test mode's default),
// one on live rates (TEST_MODE_RATES=live, RATES_CONFIG naming all five sources at a local server that answers from
// their recorded answers, refreshed every 10 s while the load runs; that server runs in this process too). Each run fills fresh invoices (one proceed per
// invoice, paid in ETH); the two alternate, and the ratio is of the medians measured in the same run.
//
// Target (issue 25): live / static >= 0.85 in proceeds per second (the two are the same work plus an in-memory
// lookup; the margin is this shared machine's noise). A miss or failed requests set exit status 1.
//
// Env: BENCH_DATABASE_URL (default postgres@127.0.0.1:5432), BENCH_RATES_INVOICES (per run, default 400),
//      BENCH_RATES_ROUNDS (default 5)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../src/app.ts';
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startRateSources } from '../test/support/rate-sources.ts';
import { DEFAULT_SERVER_URL, createBenchDatabase, log, seed } from './common.ts';
import { run, toMeasurement, type Measurement } from './load.ts';

const INVOICES = Number(process.env['BENCH_RATES_INVOICES'] ?? 400);
const ROUNDS = Number(process.env['BENCH_RATES_ROUNDS'] ?? 5);
// Proceeds of one merchant wait on each other for their addresses: a few connections already saturate it.
const CONNECTIONS = 10;
const TARGET = 0.85;
const PROCEED_BODY = JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'eth' });

const sources = await startRateSources();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-bench-rates-'));
const ratesConfig = path.join(dir, 'rates.json');
fs.writeFileSync(ratesConfig, JSON.stringify({ sources: sources.sources(), refreshSeconds: 10, maxAgeSeconds: 30, timeoutSeconds: 1, minSources: 2 }));

const serverUrl = process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL;
const databases = [await createBenchDatabase(serverUrl, 'payrail_bench_rs'), await createBenchDatabase(serverUrl, 'payrail_bench_rl')];
const apps: App[] = [];
let failed = false;
try {
  const start = async (db: { url: string }, env: Record<string, string>) => {
    const app = await startApp(loadConfig({ DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '10', ...env }), createLogger('silent'));
    apps.push(app);
    const { test: { publicToken } } = await createCompany(app.db.prisma, { name: 'Bench rates' });
    return { app, auth: { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' } };
  };
  const servers = {
    static: await start(databases[0]!, {}),
    live: await start(databases[1]!, { TEST_MODE_RATES: 'live', RATES_CONFIG: ratesConfig }),
  };
  log('rates: waiting for the first live refresh');
  for (let i = 0; ; i++) {
    const res = (await (await fetch(`${servers.live.app.url}/api/rates?invoiceCurrency=usd`)).json()) as { rates: { paymentCurrency: string }[] };
    if (res.rates.some((r) => r.paymentCurrency === 'eth')) break;
    if (i > 100) throw new Error('the live rates never came');
    await new Promise((r) => setTimeout(r, 100));
  }

  const proceedRun = async (kind: keyof typeof servers, count: number): Promise<Measurement> => {
    const { app, auth } = servers[kind];
    const ids = await seed(`${app.url}/api/invoices/v1/regular`, auth, count);
    const result = await run(
      { url: `${app.url}/api/invoices/v1/regular/x/proceed`, method: 'POST', headers: { 'content-type': 'application/json' }, body: PROCEED_BODY, paths: ids.map((id) => `/api/invoices/v1/regular/${id}/proceed`), maxRequests: ids.length },
      CONNECTIONS,
      120,
    );
    // Every invoice was priced the way its server says (the audit's kind).
    const sample = (await (await fetch(`${app.url}/api/invoices/v1/regular/${ids[ids.length - 1]}`)).json()) as { paymentDetails?: { rateSources?: { kind: string } } };
    if (sample.paymentDetails?.rateSources?.kind !== kind) throw new Error(`${kind}: an invoice was priced ${JSON.stringify(sample.paymentDetails?.rateSources?.kind)}`);
    return toMeasurement(result);
  };

  log('rates: warm-up');
  await proceedRun('static', 150);
  await proceedRun('live', 150);
  const measured: Record<keyof typeof servers, Measurement[]> = { static: [], live: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order: (keyof typeof servers)[] = round % 2 ? ['live', 'static'] : ['static', 'live'];
    for (const kind of order) {
      log(`rates: round ${round + 1}, ${kind}`);
      measured[kind].push(await proceedRun(kind, INVOICES));
    }
  }
  const median = (ms: Measurement[], pick: (m: Measurement) => number) => {
    const v = ms.map(pick).sort((a, b) => a - b);
    return v[Math.floor(v.length / 2)]!;
  };
  console.log('\n## Proceed with live rates vs the static table (PostgreSQL)\n');
  console.log('| rates | proceeds/s per run | median | p50 ms (median) | p99 ms (median) | failures |');
  console.log('|---|---|---|---|---|---|');
  for (const kind of ['static', 'live'] as const) {
    const ms = measured[kind];
    console.log(
      `| ${kind} | ${ms.map((m) => m.reqPerSec.toFixed(0)).join(', ')} | ${median(ms, (m) => m.reqPerSec).toFixed(0)} | ${median(ms, (m) => m.p50)} | ${median(ms, (m) => m.p99)} | ${ms.reduce((n, m) => n + m.failures, 0)} |`,
    );
  }
  const ratio = median(measured.live, (m) => m.reqPerSec) / median(measured.static, (m) => m.reqPerSec);
  console.log(`\nlive / static: ${ratio.toFixed(2)} (target >= ${TARGET}); live refreshes during the runs: kraken answered ${sources.hits.kraken} requests`);
  if ([...measured.static, ...measured.live].some((m) => m.failures > 0)) {
    console.log('FAILED: some requests failed');
    failed = true;
  }
  if (ratio < TARGET) {
    console.log('MISSED: proceed with live rates is slower than with the static table');
    failed = true;
  }
} finally {
  for (const app of apps) await app.stop();
  for (const db of databases) await db.drop();
  await sources.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
