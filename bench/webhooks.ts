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
// Then the webhook lag under load: 8 merchants create invoices at full speed (50 keep-alive connections from a
// worker thread) for 8 s while the worker delivers; for each create, the time from its 201 to its `invoice created`
// webhook arriving at the receiver (p50/p99).
//
// Exit status 1 on errors and failed checks (a delivery lost, duplicated, badly signed or not recorded; a create
// failing); missed speed targets are only reported.
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
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { invoiceWebhookPayload } from '../src/invoices/status.ts';
import { newInvoiceId } from '../src/invoices/ids.ts';
import { createLogger } from '../src/logger.ts';
import { WebhookSender } from '../src/webhooks/sender.ts';
import { CREATE_BODY, createBenchDatabase } from './common.ts';

/** A merchant's test-mode side: the bench runs on the sandbox chain. */
interface BenchMerchant {
  companyId: string;
  publicToken: string;
  secretKey: string;
}

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
/** Bounds: the drains stay under two minutes even when the worker is far slower than hoped. */
const DRAIN_LIMIT_MS = 25_000;
const SINGLE_DRAIN_LIMIT_MS = 12_000;
const BASELINE_LIMIT_MS = 10_000;
/** No further round starts after this long (the first round of each configuration always runs). */
const ROUNDS_BUDGET_MS = 55_000;
// Issue 8: at least 40% of the signed-POST baseline at 16 merchants.
const TARGET_RATIO = 0.4;
const TARGET_RATE = 1_000;
/** Webhook lag under load: creates at full speed by LAG_MERCHANTS merchants over LAG_CONNECTIONS connections. */
const LAG_MERCHANTS = 8;
const LAG_CONNECTIONS = 50;
const LAG_WARMUP_MS = 1_000;
const LAG_DURATION_MS = 8_000;
/** After the creates stop, how long the last webhooks may take before the missing ones count as late. */
const LAG_WAIT_LIMIT_MS = 20_000;
const TARGET_LAG_P99_MS = 1_000;

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

export interface LagResult {
  merchants: number;
  connections: number;
  /** Invoices created (201) in the measured window, per second. */
  createsPerSec: number;
  created: number;
  /** Non-201 answers and connection errors of the load, warm-up included (should be 0). */
  createErrors: number;
  createStatuses: Record<string, number>;
  createP50Ms: number;
  createP99Ms: number;
  /** From each measured create's 201 to its `invoice created` webhook arriving (can be < 0: the webhook may beat the 201). */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** Creates (warm-up included) whose webhook had not arrived LAG_WAIT_LIMIT_MS after the load ended. */
  late: number;
  /** Of those, recorded delivered but never received, or with no delivery at all (lost: should be 0). */
  lost: number;
  duplicates: number;
  signaturesChecked: number;
  signaturesValid: number;
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
  lag: LagResult;
  targets: {
    ratio: { target: number; actual: number; pass: boolean };
    rate: { target: number; actual: number; pass: boolean };
    lagP99Ms: { target: number; actual: number; pass: boolean };
  };
  /** Errors and failed correctness checks: any makes the bench exit with status 1. */
  problems: string[];
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
// Lag mode: the invoice id of every receipt and its arrival time.
let track = false, tracked = [];
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
    if (track) {
      try { tracked.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).invoiceId, performance.timeOrigin + performance.now()); } catch { tracked.push(null, 0); }
    }
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
  if (m.cmd === 'reset') { Atomics.store(counter, 0, 0); ids = []; checked = 0; valid = 0; track = !!m.track; tracked = []; parentPort.postMessage({ ok: true }); }
  else if (m.cmd === 'report') parentPort.postMessage({ ids, checked, valid, tracked });
  else if (m.cmd === 'close') { server.closeAllConnections(); server.close(() => parentPort.postMessage({ closed: true })); }
});
`;

interface ReceiverReport {
  ids: string[];
  checked: number;
  valid: number;
  /** Lag mode only: invoice id, arrival time (ms since the epoch), invoice id, arrival time, ... */
  tracked: (string | number | null)[];
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
    reset: (track = false) => ask<{ ok: true }>({ cmd: 'reset', track }),
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
async function insertBacklog(sql: pg.Client, jobs: Job[], merchants: BenchMerchant[], dueAt: Date): Promise<void> {
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
async function drain(app: App, sql: pg.Client, receiver: Receiver, merchants: BenchMerchant[], jobs: Job[], limitMs: number): Promise<DrainResult> {
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
async function baseline(receiver: Receiver, merchants: BenchMerchant[], jobs: Job[], loops: number, limitMs: number): Promise<BaselineResult> {
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
        mode: 'test',
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


// ---------------------------------------------------------------------------------------------------------------
// Webhook lag under load. The creates come from a worker thread of their own (like autocannon in invoices.ts) so
// that the client does not share the event loop with the server; unlike autocannon it keeps every 201's time and
// invoice id, which the receiver's arrival times are matched with.

const LOAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, tokens, body, connections, warmupMs, durationMs } = workerData;
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const created = [];
const latencies = [];
const statuses = {};
let errors = 0, measuring = false, stopped = false;
const t = () => performance.timeOrigin + performance.now();
function post(token) {
  return new Promise((resolve) => {
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
      headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, text: '' }));
    });
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(body);
  });
}
async function loop(i) {
  const token = tokens[i % tokens.length];
  while (!stopped) {
    const sent = t();
    const r = await post(token);
    const at = t();
    let id = null;
    if (r.status === 201) { try { id = JSON.parse(r.text).id; } catch {} }
    if (typeof id !== 'string') { errors++; statuses[r.status] = (statuses[r.status] || 0) + 1; continue; }
    created.push(id, at, measuring ? 1 : 0);
    if (measuring) latencies.push(at - sent);
  }
}
const loops = Array.from({ length: connections }, (_, i) => loop(i));
setTimeout(() => { measuring = true; parentPort.postMessage({ measuring: t() }); }, warmupMs);
setTimeout(() => { measuring = false; stopped = true; parentPort.postMessage({ stopped: t() }); }, warmupMs + durationMs);
Promise.all(loops).then(() => { agent.destroy(); parentPort.postMessage({ done: true, created, latencies, errors, statuses }); });
`;

interface LoadReport {
  measuring: number;
  stopped: number;
  created: (string | number)[];
  latencies: number[];
  errors: number;
  statuses: Record<string, number>;
}

function runLoad(url: string, tokens: string[]): Promise<LoadReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(LOAD_SOURCE, {
      eval: true,
      workerData: { url, tokens, body: CREATE_BODY, connections: LAG_CONNECTIONS, warmupMs: LAG_WARMUP_MS, durationMs: LAG_DURATION_MS },
    });
    const report: Partial<LoadReport> = {};
    const timer = setTimeout(() => reject(new Error('load thread did not finish')), LAG_WARMUP_MS + LAG_DURATION_MS + 20_000);
    worker.on('error', reject);
    worker.on('message', (m: Record<string, unknown>) => {
      if ('measuring' in m) report.measuring = m['measuring'] as number;
      else if ('stopped' in m) report.stopped = m['stopped'] as number;
      else if (m['done']) {
        clearTimeout(timer);
        void worker.terminate();
        resolve({ ...(report as LoadReport), ...(m as unknown as Omit<LoadReport, 'measuring' | 'stopped'>) });
      }
    });
  });
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]! : NaN);

/** Creates at full speed by `merchants` while the worker delivers; lag = webhook arrival - the create's 201. */
async function lag(app: App, sql: pg.Client, receiver: Receiver, merchants: BenchMerchant[]): Promise<LagResult> {
  await receiver.reset(true);
  const load = await runLoad(`${app.url}/api/invoices/v1/regular`, merchants.map((m) => m.publicToken));
  const createdAt = new Map<string, { at: number; measured: boolean }>();
  for (let i = 0; i < load.created.length; i += 3) createdAt.set(load.created[i] as string, { at: load.created[i + 1] as number, measured: load.created[i + 2] === 1 });
  const deadline = now() + LAG_WAIT_LIMIT_MS;
  while (receiver.count() < createdAt.size && now() < deadline) await sleep(20);
  await sleep(200); // a duplicate would come right behind
  const report = await receiver.report();
  const arrival = new Map<string, number>();
  let duplicates = 0;
  for (let i = 0; i < report.tracked.length; i += 2) {
    const id = report.tracked[i] as string;
    if (!createdAt.has(id)) continue;
    if (arrival.has(id)) duplicates++;
    else arrival.set(id, report.tracked[i + 1] as number);
  }
  const lags: number[] = [];
  const missing: string[] = [];
  for (const [id, c] of createdAt) {
    const a = arrival.get(id);
    if (a === undefined) missing.push(id);
    else if (c.measured) lags.push(a - c.at);
  }
  lags.sort((a, b) => a - b);
  // Late is slow; lost is wrong: recorded delivered (or never queued) yet not received.
  const pendingMissing = missing.length
    ? (
        await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "WebhookDelivery" d JOIN "Event" e ON e."id" = d."eventId"
           WHERE e."invoiceId" = ANY($1::text[]) AND e."type" = 'invoice.created' AND d."status" = 'pending'`,
          [missing],
        )
      ).rows[0]!.n
    : 0;
  const latencies = [...load.latencies].sort((a, b) => a - b);
  const measured = lags.length + missing.filter((id) => createdAt.get(id)!.measured).length;
  return {
    merchants: merchants.length,
    connections: LAG_CONNECTIONS,
    createsPerSec: Math.round(measured / ((load.stopped - load.measuring) / 1000)),
    created: measured,
    createErrors: load.errors,
    createStatuses: load.statuses,
    createP50Ms: round(percentile(latencies, 0.5), 1),
    createP99Ms: round(percentile(latencies, 0.99), 1),
    lagP50Ms: round(percentile(lags, 0.5), 1),
    lagP99Ms: round(percentile(lags, 0.99), 1),
    lagMaxMs: round(lags.at(-1) ?? NaN, 1),
    late: missing.length,
    lost: missing.length - pendingMissing,
    duplicates,
    signaturesChecked: report.checked,
    signaturesValid: report.valid,
  };
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
    const merchants: BenchMerchant[] = [];
    for (let i = 0; i <= MERCHANTS; i++) merchants.push(await createCompany(app.db.prisma, { name: `Bench merchant ${i}` }).then((c) => ({ companyId: c.companyId, ...c.test })));
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
    log(`lag: creates at full speed by ${LAG_MERCHANTS} merchants (${LAG_CONNECTIONS} connections) for ${LAG_DURATION_MS / 1000} s after ${LAG_WARMUP_MS / 1000} s`);
    const lagResult = await lag(app, sql, receiver, merchants.slice(0, LAG_MERCHANTS));
    log(`lag: ${lagResult.createsPerSec} creates/s, webhook lag p50 ${lagResult.lagP50Ms} ms, p99 ${lagResult.lagP99Ms} ms`);

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
      lag: lagResult,
      targets: {
        ratio: { target: TARGET_RATIO, actual: multi.ratio, pass: multi.complete && multi.ratio >= TARGET_RATIO },
        rate: { target: TARGET_RATE, actual: multi.deliveriesPerSec, pass: multi.complete && multi.deliveriesPerSec >= TARGET_RATE },
        lagP99Ms: { target: TARGET_LAG_P99_MS, actual: lagResult.lagP99Ms, pass: lagResult.late === 0 && lagResult.lagP99Ms < TARGET_LAG_P99_MS },
      },
      problems: [...problemsOf('16 merchants', multi), ...problemsOf('1 merchant', single), ...lagProblems(lagResult)],
    };
  } finally {
    await app?.stop().catch((e: unknown) => log(`stopping the server: ${(e as Error).message}`));
    await receiver?.close();
    await sql.end().catch(() => undefined);
    await database.drop().catch((e: unknown) => log(`dropping the database: ${(e as Error).message}`));
  }
}

/** Errors and failed checks of a configuration: lost, duplicated, badly signed or unrecorded deliveries. */
function problemsOf(label: string, c: Configuration): string[] {
  return c.rounds.flatMap((r, i) => {
    const w = r.worker;
    const at = `${label} round ${i + 1}`;
    const found: string[] = [];
    if (!w.complete) found.push(`${at}: ${w.delivered}/${w.deliveries} delivered within the time limit`);
    if (w.duplicates) found.push(`${at}: ${w.duplicates} deliveries received twice (no crash, so none should be)`);
    if (w.signaturesValid !== w.signaturesChecked) found.push(`${at}: ${w.signaturesChecked - w.signaturesValid} of ${w.signaturesChecked} sampled signatures invalid`);
    if (w.complete && w.attemptsRecorded !== w.deliveries) found.push(`${at}: ${w.attemptsRecorded} attempts recorded for ${w.deliveries} deliveries answered 200 once each`);
    if (r.baseline.ok !== r.baseline.posts) found.push(`${at}: baseline ${r.baseline.posts - r.baseline.ok} of ${r.baseline.posts} posts failed`);
    return found;
  });
}

function lagProblems(l: LagResult): string[] {
  const found: string[] = [];
  if (l.createErrors) found.push(`lag: ${l.createErrors} creates failed ${JSON.stringify(l.createStatuses)}`);
  if (l.lost) found.push(`lag: ${l.lost} webhooks lost (recorded delivered or never queued, not received)`);
  if (l.duplicates) found.push(`lag: ${l.duplicates} webhooks received twice (no crash, so none should be)`);
  if (l.signaturesValid !== l.signaturesChecked) found.push(`lag: ${l.signaturesChecked - l.signaturesValid} of ${l.signaturesChecked} sampled signatures invalid`);
  if (l.created === 0) found.push('lag: no invoice was created');
  return found;
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
    `  ${r.lag.merchants} merchants creating at full speed (${r.lag.connections} connections): ${r.lag.createsPerSec} creates/s ` +
      `(${r.lag.created} measured, create p50 ${r.lag.createP50Ms} ms, p99 ${r.lag.createP99Ms} ms, ${r.lag.createErrors} errors); ` +
      `webhook lag after the 201: p50 ${r.lag.lagP50Ms} ms, p99 ${r.lag.lagP99Ms} ms, max ${r.lag.lagMaxMs} ms; ` +
      `late ${r.lag.late}, lost ${r.lag.lost}, dup ${r.lag.duplicates}, signatures ${r.lag.signaturesValid}/${r.lag.signaturesChecked}`,
    `  target: >= ${r.targets.ratio.target * 100}% of baseline (${r.settings.merchants} merchants): ${pass(r.targets.ratio.pass)} (${(r.targets.ratio.actual * 100).toFixed(1)}%)`,
    `  target: >= ${r.targets.rate.target} deliveries/s (${r.settings.merchants} merchants): ${pass(r.targets.rate.pass)} (${r.targets.rate.actual}/s)`,
    `  target: webhook lag p99 < ${r.targets.lagP99Ms.target} ms under load: ${pass(r.targets.lagP99Ms.pass)} (${r.targets.lagP99Ms.actual} ms)`,
    ...(r.problems.length ? ['!'.repeat(100), ...r.problems.map((p) => `!!! ${p}`), '!!! The bench exits with status 1.', '!'.repeat(100)] : []),
  ].join('\n');
}

async function main(): Promise<number> {
  // A last resort: every wait above is bounded, but the bench must end by itself whatever happens.
  const watchdog = setTimeout(() => {
    log('still running after 200 s: giving up');
    process.exit(2);
  }, 200_000);
  watchdog.unref();
  const result = await benchWebhooks();
  console.log(render(result));
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'webhooks.json'), `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${path.join(dir, 'webhooks.json')}`);
  // Errors and failed checks fail the run; missed speed targets are only reported.
  return result.problems.length ? 1 : 0;
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
