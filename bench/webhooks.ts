// Webhook delivery throughput: how fast the server's in-process worker drains a backlog of due deliveries, next to
// a baseline in the same run: plain loops POSTing the same signed bodies with the same HTTP client (WebhookSender)
// to the same receiver at the same concurrency.
//
// PostgreSQL only (a fresh payrail_bench_wh_<random>, dropped at the end). The server runs in this process
// (startApp); the receiver (node:http, keep-alive, answers 200 at once) runs in a worker thread so that it does not
// share the event loop with the worker or the baseline under test. The backlog is written in bulk with the same
// rows the outbox writes (src/events/outbox.ts: an invoice.created event and its pending delivery), due 30 s in
// the future so that the running worker leaves it alone; POST /api/sandbox/clock/advance {"minutes": 1} for every
// merchant (each has its own test clock) then makes all of it due at once and wakes the worker, and the clock starts. The run ends when the database has every
// delivery of the backlog delivered.
//
//   npx tsx bench/webhooks.ts           (BENCH_PG_URL overrides postgresql://postgres@127.0.0.1:5432/postgres)
//   node --cpu-prof --import tsx bench/webhooks.ts
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { startApp, type App } from '../src/app.ts';
import { createCompany, type CompanyCredentials } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { invoiceWebhookPayload } from '../src/invoices/status.ts';
import { newInvoiceId } from '../src/invoices/ids.ts';
import { createLogger } from '../src/logger.ts';
import { WebhookSender } from '../src/webhooks/sender.ts';
import { createBenchDatabase } from './common.ts';

const DEFAULT_PG = 'postgresql://postgres@127.0.0.1:5432/postgres';
const CONCURRENCY = 16;
const MERCHANTS = 16;
const BACKLOG = 10_000;
const SINGLE_BACKLOG = 2_000;
const WARMUP = 800;
/**
 * Each configuration is measured in rounds of [baseline, worker] back to back, and the medians are reported: on a
 * shared 2-core machine a single pair can be off by a factor of two either way.
 */
const ROUNDS = 3;
const SINGLE_ROUNDS = 2;
/** Bounds: the whole bench stays under two minutes even when the worker is far slower than hoped. */
const DRAIN_LIMIT_MS = 25_000;
const SINGLE_DRAIN_LIMIT_MS = 12_000;
const BASELINE_LIMIT_MS = 10_000;
/** No further round starts after this long (the first round of each configuration always runs). */
const ROUNDS_BUDGET_MS = 55_000;
const TARGET_RATIO = 0.5;
const TARGET_RATE = 1_000;

export interface DrainResult {
  merchants: number;
  deliveries: number;
  /** Delivered rows when the run ended (equals `deliveries` when complete). */
  delivered: number;
  complete: boolean;
  /** From the clock advance (everything due) to every row recorded delivered. */
  seconds: number;
  deliveriesPerSec: number;
  /** Receipts between 10 % and 90 % of the backlog, per second: the rate without start-up and tail. */
  steadyPerSec: number;
  /** Receipts of an event id already received (should be 0). */
  duplicates: number;
  /** Of the sampled receipts, how many had both signatures valid. */
  signaturesChecked: number;
  signaturesValid: number;
  attemptsRecorded: number;
}

export interface BaselineResult {
  loops: number;
  posts: number;
  ok: number;
  seconds: number;
  postsPerSec: number;
}

export interface Round {
  baseline: BaselineResult;
  worker: DrainResult;
  /** worker deliveries/s over baseline posts/s of this round. */
  ratio: number;
}

export interface Configuration {
  merchants: number;
  backlog: number;
  rounds: Round[];
  /** Medians over the rounds. */
  deliveriesPerSec: number;
  baselinePostsPerSec: number;
  ratio: number;
  /** Every round drained its whole backlog with no duplicate. */
  complete: boolean;
}

export interface Result {
  startedAt: string;
  node: string;
  cpus: number;
  /** os.loadavg()[0] before and after: how much else the machine was doing. */
  loadAverage: { before: number; after: number };
  settings: { concurrency: number; merchants: number; backlog: number; singleBacklog: number; dbPoolSize: number; batchSize: number; pollMs: number };
  multi: Configuration;
  single: Configuration;
  targets: { ratio: { target: number; actual: number; pass: boolean }; rate: { target: number; actual: number; pass: boolean } };
}

const log = (msg: string) => console.error(`[bench webhooks ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------------------------
// The receiver, in a worker thread. Shared memory: [0] receipts since the last reset; times[i] = arrival of the
// i-th receipt (ms since the epoch, sub-ms). The first SAMPLE receipts of each phase are verified like a merchant
// would (both signatures), the rest only counted.

const RECEIVER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');
const counter = new Int32Array(workerData.counter);
const times = new Float64Array(workerData.times);
const secrets = workerData.secrets;
const SAMPLE = workerData.sample;
let ids = [];
let checked = 0, valid = 0;
const same = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
function verify(secret, headers, body) {
  const spec = createHmac('sha512', secret.trim()).update(body, 'utf8').digest('hex');
  const id = headers['webhook-id'], ts = headers['webhook-timestamp'], sig = headers['webhook-signature'] || '';
  const std = createHmac('sha256', Buffer.from(secret.trim(), 'utf8')).update(id + '.' + ts + '.' + body).digest('base64');
  return same(spec, headers['signature'] || '') && sig.split(' ').some((s) => same(s, 'v1,' + std));
}
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const i = Atomics.add(counter, 0, 1);
    if (i < times.length) times[i] = performance.timeOrigin + performance.now();
    ids.push(req.headers['webhook-id']);
    if (checked < SAMPLE) {
      const lane = Number((/^\\/hooks\\/(\\d+)$/.exec(req.url) || [])[1]);
      checked++;
      if (secrets[lane] !== undefined && verify(secrets[lane], req.headers, Buffer.concat(chunks).toString('utf8'))) valid++;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m.cmd === 'reset') { Atomics.store(counter, 0, 0); ids = []; checked = 0; valid = 0; parentPort.postMessage({ ok: true }); }
  else if (m.cmd === 'report') parentPort.postMessage({ ids, checked, valid });
  else if (m.cmd === 'close') { server.closeAllConnections(); server.close(() => parentPort.postMessage({ closed: true })); }
});
`;

interface ReceiverReport {
  ids: string[];
  checked: number;
  valid: number;
}

async function startReceiver(secrets: string[], capacity: number) {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const times = new Float64Array(new SharedArrayBuffer(8 * capacity));
  const worker = new Worker(RECEIVER_SOURCE, { eval: true, workerData: { counter: counter.buffer, times: times.buffer, secrets, sample: 200 } });
  const ask = <T>(message: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('receiver thread did not answer')), 10_000);
      worker.once('message', (m: T) => {
        clearTimeout(timer);
        resolve(m);
      });
      if (message !== undefined) worker.postMessage(message);
    });
  const { port } = await ask<{ port: number }>(undefined);
  return {
    url: (lane: number) => `http://127.0.0.1:${port}/hooks/${lane}`,
    count: () => Atomics.load(counter, 0),
    time: (i: number) => times[i]!,
    reset: () => ask<{ ok: true }>({ cmd: 'reset' }),
    report: () => ask<ReceiverReport>({ cmd: 'report' }),
    async close() {
      await ask({ cmd: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// ---------------------------------------------------------------------------------------------------------------
// Database


interface Job {
  eventId: string;
  lane: number;
  invoiceId: string;
  /** The exact bytes the worker will send (webhookBody of the stored payload). */
  body: string;
}

/** A backlog spread round-robin over the merchants, as concurrent invoice creation by several merchants would be. */
function makeJobs(count: number, lanes: number[]): Job[] {
  return Array.from({ length: count }, (_, i) => {
    const invoiceId = newInvoiceId();
    return { eventId: randomUUID(), lane: lanes[i % lanes.length]!, invoiceId, body: JSON.stringify(invoiceWebhookPayload(invoiceId, 'created')) };
  });
}

/**
 * The outbox's rows (recordInvoiceEvent: the event, and its pending delivery to the company's URL with the event's
 * seq), in one statement per 2,000, due at `dueAt`.
 */
async function insertBacklog(sql: pg.Client, jobs: Job[], merchants: CompanyCredentials[], dueAt: Date): Promise<void> {
  for (let i = 0; i < jobs.length; i += 2_000) {
    const chunk = jobs.slice(i, i + 2_000);
    await sql.query(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS t(id, company, invoice, payload, ord)
       ), e AS (
         INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload")
         SELECT id, company, 'invoice.created', 'invoice', invoice, payload::json FROM input ORDER BY ord
         RETURNING "id", "seq", "companyId"
       )
       INSERT INTO "WebhookDelivery" ("id", "eventId", "companyId", "url", "seq", "status", "nextAttemptAt")
       SELECT gen_random_uuid(), e."id", e."companyId", c."webhookUrl", e."seq", 'pending', $5
       FROM e JOIN "Company" c ON c."id" = e."companyId"
       WHERE c."webhookUrl" IS NOT NULL`,
      [
        chunk.map((j) => j.eventId),
        chunk.map((j) => merchants[j.lane]!.companyId),
        chunk.map((j) => j.invoiceId),
        chunk.map((j) => JSON.stringify(invoiceWebhookPayload(j.invoiceId, 'created'))),
        dueAt,
      ],
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP against the server

async function api(app: App, method: string, p: string, token: string, json?: unknown): Promise<any> {
  const res = await fetch(`${app.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// The two measurements

/** The worker drains `jobs`: inserted due in 30 s, made due by 1-minute clock advances, timed until all delivered. */
async function drain(app: App, sql: pg.Client, receiver: Receiver, merchants: CompanyCredentials[], jobs: Job[], limitMs: number): Promise<DrainResult> {
  await receiver.reset();
  const clock = await api(app, 'GET', '/api/sandbox/clock', merchants[0]!.publicToken);
  await insertBacklog(sql, jobs, merchants, new Date(Date.parse(clock.now) + 30_000));
  const ids = jobs.map((j) => j.eventId);
  const deliveredCount = async () =>
    (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "eventId" = ANY($1::text[]) AND "status" = 'delivered'`, [ids])).rows[0]!.n;

  // Every merchant has its own test clock: advance them all (each advance also wakes the worker).
  const started = now();
  await Promise.all(merchants.map((m) => api(app, 'POST', '/api/sandbox/clock/advance', m.publicToken, { minutes: 1 })));
  const deadline = started + limitMs;
  while (receiver.count() < jobs.length && now() < deadline) await sleep(20);
  let delivered = await deliveredCount();
  while (delivered < jobs.length && now() < deadline) {
    await sleep(5);
    delivered = await deliveredCount();
  }
  const ended = now();
  const complete = delivered === jobs.length;
  const received = receiver.count();
  const report = await receiver.report();
  const wanted = new Set(ids);
  const seen = new Set<string>();
  let duplicates = 0;
  for (const id of report.ids) {
    if (!wanted.has(id)) continue;
    if (seen.has(id)) duplicates++;
    seen.add(id);
  }
  const index = (fraction: number) => Math.max(0, Math.floor(jobs.length * fraction) - 1);
  const [from, to] = [index(0.1), index(0.9)];
  const steadyPerSec = complete && received >= jobs.length ? (to - from) / ((receiver.time(to) - receiver.time(from)) / 1000) : 0;
  const attemptsRecorded = (
    await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "WebhookAttempt" a JOIN "WebhookDelivery" d ON d."id" = a."deliveryId" WHERE d."eventId" = ANY($1::text[])`,
      [ids],
    )
  ).rows[0]!.n;
  const seconds = (ended - started) / 1000;
  return {
    merchants: new Set(jobs.map((j) => j.lane)).size,
    deliveries: jobs.length,
    delivered,
    complete,
    seconds: round(seconds, 3),
    deliveriesPerSec: Math.round(delivered / seconds),
    steadyPerSec: Math.round(steadyPerSec),
    duplicates,
    signaturesChecked: report.checked,
    signaturesValid: report.valid,
    attemptsRecorded,
  };
}

/** `loops` sequential loops POSTing the same signed bodies with WebhookSender (the worker's HTTP client) to the receiver. */
async function baseline(receiver: Receiver, merchants: CompanyCredentials[], jobs: Job[], loops: number, limitMs: number): Promise<BaselineResult> {
  await receiver.reset();
  const sender = new WebhookSender(10_000, true);
  let next = 0;
  let ok = 0;
  const started = now();
  const deadline = started + limitMs;
  const loop = async () => {
    for (let i = next++; i < jobs.length && now() < deadline; i = next++) {
      const j = jobs[i]!;
      const r = await sender.send({
        url: receiver.url(j.lane),
        eventId: j.eventId,
        body: j.body,
        secretKey: merchants[j.lane]!.secretKey,
        timestampSeconds: Math.floor(Date.now() / 1000),
      });
      if (r.ok) ok++;
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  const seconds = (now() - started) / 1000;
  sender.close();
  const posts = Math.min(next, jobs.length);
  return { loops, posts, ok, seconds: round(seconds, 3), postsPerSec: Math.round(ok / seconds) };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : round((sorted[mid - 1]! + sorted[mid]!) / 2, 3);
};

// ---------------------------------------------------------------------------------------------------------------

export async function benchWebhooks(): Promise<Result> {
  const startedAt = new Date().toISOString();
  const loadBefore = round(os.loadavg()[0]!, 2);
  const pgUrl = process.env['BENCH_PG_URL'] ?? DEFAULT_PG;
  const database = await createBenchDatabase(pgUrl, 'payrail_bench_wh');
  let app: App | null = null;
  let receiver: Receiver | null = null;
  const sql = new pg.Client({ connectionString: database.url });
  sql.on('error', () => {});
  try {
    const config = loadConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    });
    log(`database ${new URL(database.url).pathname.slice(1)}; starting the server`);
    app = await startApp(config, createLogger('silent'));
    await sql.connect();

    // Merchants 0..15 for the multi-merchant run, 16 alone for the single-lane run.
    const merchants: CompanyCredentials[] = [];
    for (let i = 0; i <= MERCHANTS; i++) merchants.push(await createCompany(app.db.prisma, { name: `Bench merchant ${i}` }));
    receiver = await startReceiver(
      merchants.map((m) => m.secretKey),
      BACKLOG + WARMUP,
    );
    for (let lane = 0; lane < merchants.length; lane++) {
      await api(app, 'PUT', '/api/company/settings/webhook-url', merchants[lane]!.publicToken, { webHookUrl: receiver.url(lane) });
    }
    const multiLanes = Array.from({ length: MERCHANTS }, (_, i) => i);

    log(`warm-up: ${WARMUP} deliveries and ${WARMUP} baseline posts`);
    await drain(app, sql, receiver, merchants, makeJobs(WARMUP, multiLanes), SINGLE_DRAIN_LIMIT_MS);
    await baseline(receiver, merchants, makeJobs(WARMUP, multiLanes), CONCURRENCY, BASELINE_LIMIT_MS);

    const roundsStarted = now();
    const measure = async (label: string, lanes: number[], backlog: number, loops: number, rounds: number, drainLimitMs: number): Promise<Configuration> => {
      const done: Round[] = [];
      for (let i = 0; i < rounds && (i === 0 || now() - roundsStarted < ROUNDS_BUDGET_MS); i++) {
        const b = await baseline(receiver!, merchants, makeJobs(backlog, lanes), loops, BASELINE_LIMIT_MS);
        const w = await drain(app!, sql, receiver!, merchants, makeJobs(backlog, lanes), drainLimitMs);
        const ratio = round(w.deliveriesPerSec / Math.max(1, b.postsPerSec), 3);
        log(`${label} round ${i + 1}: worker ${w.deliveriesPerSec}/s${w.complete ? '' : ' (incomplete)'}, baseline ${b.postsPerSec}/s, ratio ${ratio}`);
        done.push({ baseline: b, worker: w, ratio });
      }
      return {
        merchants: lanes.length,
        backlog,
        rounds: done,
        deliveriesPerSec: median(done.map((r) => r.worker.deliveriesPerSec)),
        baselinePostsPerSec: median(done.map((r) => r.baseline.postsPerSec)),
        ratio: median(done.map((r) => r.ratio)),
        complete: done.every((r) => r.worker.complete && r.worker.duplicates === 0 && r.baseline.ok === r.baseline.posts),
      };
    };
    log(`${MERCHANTS} merchants: up to ${ROUNDS} rounds of ${BACKLOG} baseline posts (${CONCURRENCY} loops) and ${BACKLOG} deliveries`);
    const multi = await measure(`${MERCHANTS} merchants`, multiLanes, BACKLOG, CONCURRENCY, ROUNDS, DRAIN_LIMIT_MS);
    log(`1 merchant: up to ${SINGLE_ROUNDS} rounds of ${SINGLE_BACKLOG} baseline posts (1 loop) and ${SINGLE_BACKLOG} deliveries`);
    const single = await measure('1 merchant', [MERCHANTS], SINGLE_BACKLOG, 1, SINGLE_ROUNDS, SINGLE_DRAIN_LIMIT_MS);

    return {
      startedAt,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: { before: loadBefore, after: round(os.loadavg()[0]!, 2) },
      settings: {
        concurrency: CONCURRENCY,
        merchants: MERCHANTS,
        backlog: BACKLOG,
        singleBacklog: SINGLE_BACKLOG,
        dbPoolSize: config.dbPoolSize,
        batchSize: config.webhooks.batchSize,
        pollMs: config.webhooks.pollMs,
      },
      multi,
      single,
      targets: {
        ratio: { target: TARGET_RATIO, actual: multi.ratio, pass: multi.complete && multi.ratio >= TARGET_RATIO },
        rate: { target: TARGET_RATE, actual: multi.deliveriesPerSec, pass: multi.complete && multi.deliveriesPerSec >= TARGET_RATE },
      },
    };
  } finally {
    await app?.stop().catch((e: unknown) => log(`stopping the server: ${(e as Error).message}`));
    await receiver?.close();
    await sql.end().catch(() => undefined);
    await database.drop().catch((e: unknown) => log(`dropping the database: ${(e as Error).message}`));
  }
}

function render(r: Result): string {
  const pass = (p: boolean) => (p ? 'PASS' : 'MISS');
  const w = (d: DrainResult) =>
    `worker ${d.deliveriesPerSec}/s (${d.delivered}/${d.deliveries} in ${d.seconds} s${d.complete ? '' : ', INCOMPLETE'}, steady ${d.steadyPerSec}/s, ` +
    `dup ${d.duplicates}, signatures ${d.signaturesValid}/${d.signaturesChecked}, attempts ${d.attemptsRecorded})`;
  const b = (x: BaselineResult) => `baseline ${x.postsPerSec}/s (${x.ok}/${x.posts} ok, ${x.seconds} s)`;
  const config = (c: Configuration, loops: number) => [
    `  ${c.merchants} merchant${c.merchants > 1 ? 's' : ''}, ${c.backlog} deliveries, baseline ${loops} loop${loops > 1 ? 's' : ''}:`,
    ...c.rounds.map((x, i) => `    round ${i + 1}: ${w(x.worker)}; ${b(x.baseline)}; ratio ${x.ratio}`),
    `    median: ${c.deliveriesPerSec} deliveries/s, baseline ${c.baselinePostsPerSec} posts/s, ratio ${c.ratio}${c.complete ? '' : ' (INCOMPLETE)'}`,
  ];
  return [
    `Webhook delivery (PostgreSQL, node ${r.node}, ${r.cpus} cpus, load average ${r.loadAverage.before} -> ${r.loadAverage.after}; ` +
      `WEBHOOK_CONCURRENCY=${r.settings.concurrency}, batch ${r.settings.batchSize}, DB pool ${r.settings.dbPoolSize})`,
    ...config(r.multi, r.settings.concurrency),
    ...config(r.single, 1),
    `  target: >= ${r.targets.ratio.target * 100}% of baseline (${r.settings.merchants} merchants): ${pass(r.targets.ratio.pass)} (${(r.targets.ratio.actual * 100).toFixed(1)}%)`,
    `  target: >= ${r.targets.rate.target} deliveries/s (${r.settings.merchants} merchants): ${pass(r.targets.rate.pass)} (${r.targets.rate.actual}/s)`,
  ].join('\n');
}

async function main(): Promise<number> {
  // A last resort: every wait above is bounded, but the bench must end by itself whatever happens.
  const watchdog = setTimeout(() => {
    log('still running after 150 s: giving up');
    process.exit(2);
  }, 150_000);
  watchdog.unref();
  const result = await benchWebhooks();
  console.log(render(result));
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'webhooks.json'), `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${path.join(dir, 'webhooks.json')}`);
  return result.multi.complete && result.single.complete ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(2);
    },
  );
}
