// CPU profile of the service's main thread under one benchmark load, on PostgreSQL:
//   npx tsx bench/profile.ts [restCreate|graphqlCreate|restRead|graphqlRead|baselineCreate|baselineRead] [seconds=10]
// Prints the top self-time functions and packages, and writes bench/results/<scenario>.cpuprofile
// (open it in Chrome DevTools > Performance, or speedscope).
import fs from 'node:fs';
import { Session, type Profiler } from 'node:inspector/promises';
import { startApp } from '../src/app.ts';
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { insertBaselineCompany, pgBackend, startBaseline } from './baseline.ts';
import { CREATE_BODY, DEFAULT_SERVER_URL, GQL_CREATE, createBenchDatabase, gqlRead, log, seed } from './common.ts';
import { measure, run, toMeasurement, type LoadTarget } from './load.ts';
import { prepareTransfers } from './payments.ts';

const SCENARIOS = ['payments', 'restCreate', 'graphqlCreate', 'restRead', 'graphqlRead', 'baselineCreate', 'baselineRead'] as const;
type Scenario = (typeof SCENARIOS)[number];

const scenario = (process.argv[2] ?? 'restCreate') as Scenario;
const seconds = Number(process.argv[3] ?? 10);
if (!SCENARIOS.includes(scenario)) throw new Error(`scenario must be one of ${SCENARIOS.join(', ')}`);

/** Where a frame's code lives: a package name, a src/ file, or a V8/Node pseudo-frame. */
function origin(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.includes('/src/')) return `src/${url.split('/src/')[1]}`;
  if (url.startsWith('node:')) return 'node';
  return url || '(native/V8)';
}

function summarize(profile: Profiler.Profile, top = 25): string {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + (deltas[i] ?? 0));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byNode.get(id)!.callFrame;
    const where = origin(url);
    const key = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byOrigin.set(where, (byOrigin.get(where) ?? 0) + us);
  }
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [`Top self time, main thread (${(total / 1e6).toFixed(1)} s sampled):`, ...rows(byFunction), '', 'By package / file:', ...rows(byOrigin)].join('\n');
}

const database = await createBenchDatabase(process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL);
const session = new Session();
try {
  const config = loadConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '10' });
  const app = await startApp(config, createLogger('silent'));
  const backend = pgBackend(database.url, 10);
  const baseline = await startBaseline(backend, await insertBaselineCompany(backend));
  try {
    const { test: { publicToken } } = await createCompany(app.db.prisma, { name: 'Bench' });
    const auth = { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' };
    const ids = await seed(`${app.url}/api/invoices/v1/regular`, auth, 300);
    const json = { 'content-type': 'application/json' };
    if (scenario === 'payments') {
      // Confirmed sandbox transfers, each paying its own proceeded invoice (bench/payments.ts), profiled by count.
      const warm = await prepareTransfers(app, auth, 200, 16);
      const bodies = await prepareTransfers(app, auth, Math.max(200, seconds * 150), 16);
      const target: LoadTarget = { url: `${app.url}/api/sandbox/transfers`, method: 'POST', headers: auth };
      await run({ ...target, bodies: warm, maxRequests: warm.length }, 50, 60);
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 500 });
      await session.post('Profiler.start');
      const m = toMeasurement(await run({ ...target, bodies, maxRequests: bodies.length }, 50, 4 * seconds));
      const { profile } = await session.post('Profiler.stop');
      log(`payments: ${Math.round(m.reqPerSec)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, failures ${m.failures} (profiler attached)`);
      fs.mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
      fs.writeFileSync(new URL('./results/payments.cpuprofile', import.meta.url), JSON.stringify(profile));
      console.log(summarize(profile, 40));
      process.exitCode = 0;
    } else {
    const targets: Record<Exclude<Scenario, 'payments'>, LoadTarget> = {
      restCreate: { url: `${app.url}/api/invoices/v1/regular`, method: 'POST', headers: auth, body: CREATE_BODY },
      graphqlCreate: { url: `${app.url}/graphql`, method: 'POST', headers: auth, body: GQL_CREATE },
      restRead: { url: app.url, method: 'GET', rotate: ids.map((id) => ({ path: `/api/invoices/v1/regular/${id}` })) },
      graphqlRead: { url: `${app.url}/graphql`, method: 'POST', headers: auth, rotate: ids.map((id) => ({ path: '/graphql', body: gqlRead(id) })) },
      baselineCreate: { url: `${baseline.url}/create`, method: 'POST', headers: json, body: CREATE_BODY },
      baselineRead: { url: baseline.url, method: 'GET', rotate: ids.map((id) => ({ path: `/read/${id}` })) },
    };
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    // Warm up unprofiled, then profile a steady-state run.
    await measure(targets[scenario as Exclude<Scenario, 'payments'>], { connections: 50, durationSec: 2, warmupSec: 0 });
    await session.post('Profiler.start');
    const m = await measure(targets[scenario as Exclude<Scenario, 'payments'>], { connections: 50, durationSec: seconds, warmupSec: 0 });
    const { profile } = await session.post('Profiler.stop');
    log(`${scenario}: ${Math.round(m.reqPerSec)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, failures ${m.failures} (profiler attached)`);
    const out = new URL(`./results/${scenario}.cpuprofile`, import.meta.url);
    fs.mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(profile));
    console.log(summarize(profile));
    console.log(`\nWrote ${out.pathname}`);
    }
  } finally {
    await baseline.stop();
    await backend.close();
    await app.stop();
  }
} finally {
  session.disconnect();
  await database.drop();
}
