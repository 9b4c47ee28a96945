// `npm run bench` (exports): the memory and speed of a ledger export on PostgreSQL. 100,000 ledger entries of one
// merchant (50,000 deposit journals over a year, each with its chain transfer) are written by SQL; the real server
// (as `npm start` runs it) streams the year's ledger export twice while this process samples the server's resident
// memory (/proc/<pid>/status) every 10 ms; then again with the server's old space capped at 96 MB. Printed: RSS
// before, peak and after, and rows per second, next to a baseline from the same run: the same rows read by ONE query
// (the export's own entry query without pages), its time and the memory it takes to hold them.
//
// Targets (issue 15): every download has every row and the right closing balance; a second export peaks less than
// 64 MB above the first (nothing is kept between exports: the year held takes ~200 MB); with the old space capped
// the export completes and RSS grows by less than 64 MB. Misses are reported and set exit status 1.
//
// Env: BENCH_DATABASE_URL (default postgres@127.0.0.1:5432), BENCH_EXPORT_ENTRIES (default 100000).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCompany } from '../src/companies/service.ts';
import { openDatabase } from '../src/db/client.ts';
import { formatPlain } from '../src/domain/money.ts';
import { readEntryPage } from '../src/ledger/entries.ts';
import { createBenchDatabase, DEFAULT_SERVER_URL, log } from './common.ts';

const ENTRIES = Number(process.env['BENCH_EXPORT_ENTRIES'] ?? 100_000);
const JOURNALS = ENTRIES / 2;
const YEAR = { from: new Date('2025-01-01T00:00:00.000Z'), to: new Date('2026-01-01T00:00:00.000Z') };
const TARGETS = { retainedBytes: 64 * 1024 ** 2, cappedGrowthBytes: 64 * 1024 ** 2 };
// V8 lets its old space grow well past the live data before it collects (with room to spare it grows the heap
// rather than spend time collecting), so the RSS peak of a default heap says more about that policy than about what
// the export holds. Capped at 96 MB (the server holds ~60 MB live when idle), it must collect: holding the year's
// rows at once would not fit.
const CAPPED_OLD_SPACE_MB = 96;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MB`;

/** Resident memory of a process now (VmRSS), in bytes. */
function rss(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) * 1024;
}

/** The server as `npm start` runs it; resolves with its URL once it logs that it listens. */
async function startServer(nodeFlags: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeFlags, 'scripts/run.mjs', 'src/bin/server.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start')), 60_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split('\n')) {
        try {
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg === 'payrail listening') {
            clearTimeout(timer);
            resolve(parsed.url!);
          }
        } catch {
          // not a log line
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return { child, url };
}

const database = await createBenchDatabase(process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL, 'payrail_bench_exp');
let server = null as { child: ChildProcess; url: string } | null;
let failed = false;
try {
  const db = await openDatabase({ url: database.url, poolSize: 2 });
  const { companyId, test: { publicToken } } = await createCompany(db.prisma, { name: 'Bench exports' });
  log(`exports: seeding ${ENTRIES} ledger entries (${JOURNALS} deposit journals over a year) by SQL`);
  let t = performance.now();
  const spacingMs = (YEAR.to.getTime() - YEAR.from.getTime()) / JOURNALS;
  await db.prisma.$executeRaw`
    INSERT INTO "ChainTransfer" ("id", "network", "asset", "txHash", "toAddress", "amount", "confirmations", "state", "role", "companyId", "addressId", "seenAt", "confirmedAt", "createdAt")
    SELECT md5('t' || i)::uuid, 'tron', 'trc20usdt', md5('h' || i) || md5('x' || i), 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', ((i % 1000 + 1) || '.25')::numeric, 19, 'confirmed', 'deposit',
      ${companyId}::uuid, 'bench', t, t, t
    FROM (SELECT i, ${YEAR.from}::timestamptz + (i * ${spacingMs}::float8) * interval '1 millisecond' AS t FROM generate_series(0, ${JOURNALS - 1}::int) i) s`;
  await db.prisma.$executeRaw`
    INSERT INTO "LedgerEntry" ("id", "journalId", "companyId", "asset", "account", "amount", "kind", "transferId", "createdAt")
    SELECT md5(side || i)::uuid, md5('j' || i)::uuid, ${companyId}::uuid, 'trc20usdt',
      CASE side WHEN 'a' THEN 'chain_external' ELSE 'merchant_available' END,
      CASE side WHEN 'a' THEN -((i % 1000 + 1) || '.25')::numeric ELSE ((i % 1000 + 1) || '.25')::numeric END,
      'deposit', md5('t' || i)::uuid, ${YEAR.from}::timestamptz + (i * ${spacingMs}::float8) * interval '1 millisecond'
    FROM generate_series(0, ${JOURNALS - 1}::int) i CROSS JOIN (VALUES ('a'), ('b')) v(side)`;
  await db.prisma.$executeRaw`
    INSERT INTO "Balance" ("companyId", "asset", "account", "shard", "amount", "updatedAt")
    SELECT "companyId", "asset", "account", 0, SUM("amount"), now() FROM "LedgerEntry" GROUP BY "companyId", "asset", "account"`;
  await db.prisma.$executeRawUnsafe('ANALYZE');
  const [closing] = await db.prisma.$queryRaw<{ total: string }[]>`
    SELECT SUM("amount")::text AS total FROM "LedgerEntry" WHERE "account" = 'merchant_available'`;
  log(`exports: seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // Baseline: the same rows by one query (the export's entry query, one page of everything), held in memory.
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  t = performance.now();
  const all = await readEntryPage(db.prisma, companyId, YEAR, null, ENTRIES + 1);
  const baselineMs = performance.now() - t;
  const baselineHeld = process.memoryUsage().rss - before;
  if (all.length !== ENTRIES) throw new Error(`baseline: ${all.length} rows for ${ENTRIES}`);
  all.length = 0;
  await db.close();

  const headers = { authorization: `Bearer ${publicToken}` };
  const expectedClosing = formatPlain(closing!.total);
  const misses: string[] = [];

  /** The server started with `nodeFlags`: RSS before, two downloads of the year (each with its peak), RSS after. */
  const measure = async (nodeFlags: string[]) => {
    server = await startServer(nodeFlags, { DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-bench-exp-')) });
    const { url, child } = server;
    const pid = child.pid!;
    const exportUrl = (from: Date, to: Date) => `${url}/api/company/exports/ledger.csv?from=${from.toISOString()}&to=${to.toISOString()}`;
    // Warm-up: one day, so the code paths are loaded before "before" is measured.
    await (await fetch(exportUrl(YEAR.from, new Date(YEAR.from.getTime() + 86_400_000)), { headers })).text();
    await new Promise((r) => setTimeout(r, 500));
    const before = rss(pid);
    const downloadYear = async () => {
      let peak = rss(pid);
      const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 10);
      const started = performance.now();
      const res = await fetch(exportUrl(YEAR.from, YEAR.to), { headers });
      if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
      let rows = -1;
      let bytes = 0;
      let tail = '';
      let closingAvailable = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        const lines = (tail + decoder.decode(chunk, { stream: true })).split('\r\n');
        tail = lines.pop()!;
        rows += lines.length;
        for (const line of lines) if (line.includes(',merchant_available,')) closingAvailable = line.split(',')[7]!;
      }
      const ms = performance.now() - started;
      clearInterval(sampler);
      if (rows !== ENTRIES) misses.push(`${nodeFlags.join(' ') || 'default heap'}: ${rows} rows for ${ENTRIES}`);
      if (closingAvailable !== expectedClosing) misses.push(`closing balance ${closingAvailable}, the ledger says ${expectedClosing}`);
      return { rows, bytes, ms, peak: Math.max(peak, rss(pid)) };
    };
    const first = await downloadYear();
    const second = await downloadYear();
    await new Promise((r) => setTimeout(r, 1_000));
    const after = rss(pid);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    server = null;
    return { before, first, second, after, rate: (first.rows / first.ms) * 1000 };
  };

  log('exports: the server as started in production (default heap), two downloads of the year');
  const normal = await measure([]);
  log(`exports: the server with its old space capped at ${CAPPED_OLD_SPACE_MB} MB, two downloads of the year`);
  const capped = await measure([`--max-old-space-size=${CAPPED_OLD_SPACE_MB}`]);

  const baselineRate = (ENTRIES / baselineMs) * 1000;
  const line = (name: string, m: typeof normal) =>
    `  ${name}: RSS before ${MB(m.before)}, peak ${MB(m.first.peak)} (+${MB(m.first.peak - m.before)}), second export's peak ${MB(m.second.peak)}, after ${MB(m.after)}; ${m.rate.toFixed(0)} rows/s (${(m.first.ms / 1000).toFixed(2)} s)`;
  console.log(`\nledger export of ${ENTRIES} rows (${MB(normal.first.bytes)} of CSV) on PostgreSQL, pages of 1,000`);
  console.log(line('default heap', normal));
  console.log(line(`old space capped at ${CAPPED_OLD_SPACE_MB} MB`, capped));
  console.log(`  baseline, one query for all rows: ${(baselineMs / 1000).toFixed(2)} s, ${baselineRate.toFixed(0)} rows/s, ${MB(baselineHeld)} held`);
  console.log(`  export rate / baseline rate: ${(normal.rate / baselineRate).toFixed(2)} (default heap), ${(capped.rate / baselineRate).toFixed(2)} (capped)`);
  if (normal.second.peak - normal.first.peak >= TARGETS.retainedBytes) {
    misses.push(`the second export peaked ${MB(normal.second.peak - normal.first.peak)} higher than the first (target < ${MB(TARGETS.retainedBytes)})`);
  }
  if (capped.first.peak - capped.before >= TARGETS.cappedGrowthBytes) {
    misses.push(`capped: RSS grew by ${MB(capped.first.peak - capped.before)} (target < ${MB(TARGETS.cappedGrowthBytes)})`);
  }
  if (misses.length) {
    failed = true;
    console.log(`MISSED: ${misses.join('; ')}`);
  }
} finally {
  server?.child.kill('SIGTERM');
  if (server) await new Promise((r) => server!.child.once('exit', r));
  await database.drop();
}
process.exit(failed ? 1 : 0);
