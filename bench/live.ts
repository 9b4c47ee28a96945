// `npm run bench` (live): fan-out of live invoice status to many graphql-ws subscribers, next to a baseline in the
// same run that broadcasts the same payloads over plain `ws` (bench/live-baseline.ts).
//
// The server runs as a process of its own on PostgreSQL (a fresh payrail_bench_live_<random>, dropped at the end),
// so its memory is its own; so does the baseline. This process holds the subscribers: BENCH_LIVE_SUBSCRIBERS
// (default 5,000) WebSockets speaking graphql-transport-ws, each subscribed to `invoiceEvents { id status }` of one
// merchant. Each system then takes 50 changes twice:
//   - paced: one every 100 ms (a busy merchant): latency from the change's request to each receipt, p50/p99/max;
//   - burst: all 50 at once: messages per second from the first request to the last receipt (throughput).
// A change is an invoice filled by its client (POST .../proceed: created -> pending), committed, published on the
// event bus, and sent to every subscriber; the baseline POSTs the same payload to its broadcast endpoint. Latency is
// measured from the moment the request is sent, so it includes the request itself (a bound on commit-to-receipt).
//
// Every message must arrive exactly once per subscriber; anything missing or doubled fails the run (exit 1). Targets
// (issue 12): p99 < 1 s (paced: in a burst the last message waits for the whole burst on the baseline too), server
// peak RSS < 1 GB, burst throughput >= 0.5 of the baseline; misses are reported and set exit status 1.
//
//   npx tsx bench/live.ts        (BENCH_PG_URL overrides postgresql://postgres@127.0.0.1:5432/postgres;
//                                 BENCH_PROFILE=<dir> writes CPU profiles of the server and the baseline)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createCompany } from '../src/companies/service.ts';
import { openDatabase } from '../src/db/client.ts';
import { createBenchDatabase, DEFAULT_SERVER_URL, log } from './common.ts';

const SUBSCRIBERS = Number(process.env['BENCH_LIVE_SUBSCRIBERS'] ?? 5_000);
const CHANGES = 50;
const PACE_MS = 100;
const CONNECT_BATCH = 250;
const DELIVERY_LIMIT_MS = 120_000;
const TARGETS = { p99Ms: 1_000, rssBytes: 1024 ** 3, throughputRatio: 0.5 };
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUERY = 'subscription { invoiceEvents { id status } }';

interface Started {
  child: ChildProcess;
  url: string;
}

/** Starts `node <args>` and waits for the line `ready(stdout line)` accepts; answers the URL. */
async function startProcess(args: string[], env: Record<string, string>, ready: (line: string) => string | null): Promise<Started> {
  const script = args.at(-1)!;
  // BENCH_PROFILE=<dir>: CPU profiles of both processes (node --cpu-prof), written when they stop.
  const profile = process.env['BENCH_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`] : [];
  const child = spawn(process.execPath, [...profile, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 60_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split('\n')) {
        const found = ready(line);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  child.stdout!.resume();
  return { child, url };
}

/** Peak resident memory of a process (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'))!;
  return Number(line.replace(/\D+/g, '')) * 1024;
}

/** The subscribers: every message's invoice id and receipt time, per phase. */
class Fleet {
  private readonly sockets: WebSocket[] = [];
  /** invoice id -> when its change was requested. */
  sentAt = new Map<string, number>();
  latencies: number[] = [];
  lastReceipt = 0;
  received = 0;
  duplicates = 0;
  /** The payload of the first message per invoice id (for the baseline to broadcast the same). */
  payloads = new Map<string, unknown>();
  private readonly seen: Set<string>[] = [];

  async connect(url: string, token: string | null, count: number): Promise<void> {
    for (let start = 0; start < count; start += CONNECT_BATCH) {
      await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, count - start) }, (_, i) => this.open(url, token, start + i)));
    }
  }

  private open(url: string, token: string | null, index: number): Promise<void> {
    const seen = new Set<string>();
    this.seen[index] = seen;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
      this.sockets.push(socket);
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} })));
      socket.on('error', reject);
      socket.on('close', (code) => code !== 1000 && code !== 1005 && this.sockets.includes(socket) && reject(new Error(`socket ${index} closed with ${code}`)));
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; payload?: { data?: { invoiceEvents?: { id: string } } } };
        if (message.type === 'connection_ack') {
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY } }));
          resolve();
        } else if (message.type === 'ping') {
          socket.send('{"type":"pong"}');
        } else if (message.type === 'next') {
          const id = message.payload?.data?.invoiceEvents?.id;
          if (!id) throw new Error(`unexpected message ${String(data).slice(0, 300)}`);
          const now = performance.now();
          if (seen.has(id)) this.duplicates++;
          seen.add(id);
          this.received++;
          this.lastReceipt = now;
          if (!this.payloads.has(id)) this.payloads.set(id, message.payload);
          const sent = this.sentAt.get(id);
          if (sent !== undefined) this.latencies.push(now - sent);
        }
      });
    });
  }

  /** How many subscribers have seen `id`. */
  seenBy(id: string): number {
    return this.seen.filter((s) => s.has(id)).length;
  }

  resetPhase(): void {
    this.sentAt.clear();
    this.latencies = [];
    this.received = 0;
    this.duplicates = 0;
  }

  async close(): Promise<void> {
    const all = this.sockets.splice(0);
    await Promise.all(all.map((s) => new Promise<void>((resolve) => (s.readyState === WebSocket.CLOSED ? resolve() : (s.once('close', () => resolve()), s.close(1000))))));
  }
}

const until = async (check: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

interface PhaseResult {
  name: string;
  messages: number;
  durationMs: number;
  perSec: number;
  p50: number;
  p99: number;
  max: number;
}

/** Fires the changes (`trigger(i)` for i < CHANGES) paced or all at once; waits for every message. */
async function phase(fleet: Fleet, name: string, ids: string[], trigger: (id: string) => Promise<void>, paceMs: number): Promise<PhaseResult> {
  fleet.resetPhase();
  const expected = ids.length * SUBSCRIBERS;
  const started = performance.now();
  const requests: Promise<void>[] = [];
  for (const id of ids) {
    fleet.sentAt.set(id, performance.now());
    requests.push(trigger(id));
    if (paceMs > 0) await new Promise((r) => setTimeout(r, paceMs));
  }
  await Promise.all(requests);
  await until(() => fleet.received >= expected, DELIVERY_LIMIT_MS, `${name}: ${expected} messages (got ${fleet.received})`);
  await new Promise((r) => setTimeout(r, 300));
  if (fleet.received !== expected || fleet.duplicates > 0) throw new Error(`${name}: ${fleet.received} messages for ${expected} expected, ${fleet.duplicates} duplicates`);
  const durationMs = fleet.lastReceipt - started;
  const sorted = [...fleet.latencies].sort((a, b) => a - b);
  return { name, messages: fleet.received, durationMs, perSec: (fleet.received / durationMs) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! };
}

const database = await createBenchDatabase(process.env['BENCH_PG_URL'] ?? DEFAULT_SERVER_URL, 'payrail_bench_live');
const children: ChildProcess[] = [];
let failed = false;
try {
  const db = await openDatabase({ url: database.url, poolSize: 1 });
  const { test: { publicToken } } = await createCompany(db.prisma, { name: 'Bench live' });
  await db.close();
  // As `npm start` runs it (scripts/run.mjs: the bundled entry point).
  const server = await startProcess(
    ['scripts/run.mjs', 'src/bin/server.ts'],
    {
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: fs.mkdtempSync('/tmp/payrail-bench-live-'),
      LIVE_MAX_CONNECTIONS_PER_IP: String(SUBSCRIBERS * 2),
      LIVE_MAX_CONNECTIONS_PER_MERCHANT: String(SUBSCRIBERS * 2),
    },
    (line) => {
      try {
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        return parsed.msg === 'payrail listening' ? parsed.url! : null;
      } catch {
        return null;
      }
    },
  );
  children.push(server.child);
  const baseline = await startProcess(['--import', 'tsx', 'bench/live-baseline.ts'], {}, (line) => {
    try {
      return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
    } catch {
      return null;
    }
  });
  children.push(baseline.child);

  const auth = { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' };
  const createInvoice = async () => {
    const res = await fetch(`${server.url}/api/invoices/v1/regular`, { method: 'POST', headers: auth, body: JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'x', price: 5 }] }) });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  log(`live: ${CHANGES * 2} invoices to change`);
  const invoices: string[] = [];
  for (let i = 0; i < CHANGES * 2; i++) invoices.push(await createInvoice());
  const proceed = async (id: string) => {
    const res = await fetch(`${server.url}/api/invoices/v1/regular/${id}/proceed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'trc20usdt' }),
    });
    if (res.status !== 200) throw new Error(`proceed: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };

  // Payrail first: its payloads are what the baseline broadcasts.
  log(`live: ${SUBSCRIBERS} graphql-ws subscribers to the server`);
  const fleet = new Fleet();
  await fleet.connect(`${server.url.replace(/^http/, 'ws')}/graphql`, publicToken, SUBSCRIBERS);
  // Every subscription is registered once a probe invoice reached all of them.
  for (;;) {
    const probe = await createInvoice();
    try {
      await until(() => fleet.seenBy(probe) === SUBSCRIBERS, 3_000, 'the probe');
      break;
    } catch {
      // not all registered yet: probe again
    }
  }
  log('live: paced changes (server)');
  const serverPaced = await phase(fleet, 'server, paced', invoices.slice(0, CHANGES), proceed, PACE_MS);
  log('live: burst (server)');
  const serverBurst = await phase(fleet, 'server, burst', invoices.slice(CHANGES), proceed, 0);
  const serverRss = peakRss(server.child.pid!);
  const payloads = new Map(fleet.payloads);
  await fleet.close();

  log(`live: ${SUBSCRIBERS} plain ws subscribers to the baseline`);
  const plain = new Fleet();
  await plain.connect(`${baseline.url.replace(/^http/, 'ws')}/graphql`, null, SUBSCRIBERS);
  const broadcast = async (id: string) => {
    const res = await fetch(`${baseline.url}/broadcast`, { method: 'POST', body: JSON.stringify(payloads.get(id)) });
    if (res.status !== 204) throw new Error(`broadcast: ${res.status}`);
  };
  // Its subscriptions are registered at once (no probe needed), but a first broadcast warms it the same way.
  payloads.set('warm', { data: { invoiceEvents: { id: 'warm', status: 'CREATED' } } });
  await broadcast('warm');
  await until(() => plain.seenBy('warm') === SUBSCRIBERS, 10_000, 'the baseline warm-up');
  log('live: paced changes (baseline)');
  const baselinePaced = await phase(plain, 'baseline, paced', invoices.slice(0, CHANGES), broadcast, PACE_MS);
  log('live: burst (baseline)');
  const baselineBurst = await phase(plain, 'baseline, burst', invoices.slice(CHANGES), broadcast, 0);
  const baselineRss = peakRss(baseline.child.pid!);
  await plain.close();

  const ratio = serverBurst.perSec / baselineBurst.perSec;
  console.log(`\n## Live fan-out (PostgreSQL): ${SUBSCRIBERS} subscribers x ${CHANGES} changes = ${SUBSCRIBERS * CHANGES} messages per run\n`);
  console.log('| run | messages | time ms | messages/s | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of [baselinePaced, serverPaced, baselineBurst, serverBurst]) {
    console.log(`| ${r.name} | ${r.messages} | ${r.durationMs.toFixed(0)} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.max.toFixed(0)} |`);
  }
  console.log(`\npeak RSS: server ${(serverRss / 1024 ** 2).toFixed(0)} MB, baseline ${(baselineRss / 1024 ** 2).toFixed(0)} MB`);
  console.log(`burst throughput / baseline: ${ratio.toFixed(2)} (target >= ${TARGETS.throughputRatio})`);
  console.log(`p99 commit to receipt, paced: ${serverPaced.p99.toFixed(0)} ms (target < ${TARGETS.p99Ms} ms)`);
  // A burst's last messages wait for all before them on any system: its p99 is the burst's length, compared with the
  // baseline's instead of a fixed bound.
  console.log(`p99 in the burst: ${serverBurst.p99.toFixed(0)} ms (baseline ${baselineBurst.p99.toFixed(0)} ms)`);
  const misses = [
    serverPaced.p99 >= TARGETS.p99Ms ? 'p99' : null,
    serverRss >= TARGETS.rssBytes ? 'RSS' : null,
    ratio < TARGETS.throughputRatio ? 'throughput ratio' : null,
  ].filter(Boolean);
  if (misses.length) {
    console.log(`MISSED: ${misses.join(', ')}`);
    failed = true;
  }
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
  await database.drop();
}
process.exit(failed ? 1 : 0);
