// `npm run bench` (withdrawals): withdraw calls per second on PostgreSQL, single-item and 100-item batches, next to
// the invoice-create rate measured in the same run with the same load (the baseline the targets are ratios of).
// The server runs in this process with its withdrawal sender on, so every accepted withdrawal is also broadcast
// (sandbox chain) while the load runs, as in production. The merchant is funded through the real payment path.
//
// Targets (issue 10): single-item >= 0.5 of create; 100-item batches >= 2,000 items/s. Missed targets are
// reported and set exit status 1; so do failed requests.
//
// Env: BENCH_DATABASE_URL (default postgres@127.0.0.1:5432), BENCH_DURATION (s, default 8), BENCH_WARMUP (s, default 1.5)
import { fileURLToPath } from 'node:url';
import { startApp } from '../src/app.ts';
import { createCompany } from '../src/companies/service.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { CREATE_BODY, DEFAULT_SERVER_URL, createBenchDatabase, log } from './common.ts';
import { measure, type LoadSettings } from './load.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const VERIFY_WITHDRAW = fileURLToPath(new URL('./verify-withdraw.cjs', import.meta.url));
const settings: LoadSettings = {
  connections: 50,
  durationSec: Number(process.env['BENCH_DURATION'] ?? 8),
  warmupSec: Number(process.env['BENCH_WARMUP'] ?? 1.5),
};
const item = { amount: '5', tag: '', to: TRON, asset: 'trc20usdt' };
const SINGLE = JSON.stringify({ items: [item] });
const BATCH = JSON.stringify({ items: Array.from({ length: 100 }, () => item) });

const database = await createBenchDatabase(process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL, 'payrail_bench_wd');
const config = loadConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '10' });
const app = await startApp(config, createLogger('silent'));
let failed = false;
try {
  const { test: { publicToken } } = await createCompany(app.db.prisma, { name: 'Bench payouts' });
  const auth = { authorization: `Bearer ${publicToken}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${app.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  log('withdrawals: funding the merchant through a paid invoice');
  const invoice = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'float', price: 1 }] });
  await fetch(`${app.url}/api/invoices/v1/regular/${invoice['id']}/proceed`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'trc20usdt' }),
  });
  await call('POST', '/api/sandbox/transfers', { invoiceId: invoice['id'], amount: '100000000000', confirmations: 19 });

  log('withdrawals: invoice create (the baseline of this run)');
  const create = await measure({ url: `${app.url}/api/invoices/v1/regular`, method: 'POST', headers: auth, body: CREATE_BODY }, settings);
  log('withdrawals: single-item withdraw');
  const single = await measure({ url: `${app.url}/api/transactions/withdraw`, method: 'POST', headers: auth, body: SINGLE, verifyBody: VERIFY_WITHDRAW }, settings);
  log('withdrawals: 100-item withdraw');
  const batch = await measure(
    { url: `${app.url}/api/transactions/withdraw`, method: 'POST', headers: auth, body: BATCH, verifyBody: VERIFY_WITHDRAW },
    { ...settings, connections: 10 },
  );
  const ratio = single.reqPerSec / create.reqPerSec;
  const itemsPerSec = batch.reqPerSec * 100;
  const rows = [
    ['invoice create (baseline)', create],
    ['withdraw, 1 item', single],
    ['withdraw, 100 items', batch],
  ] as const;
  console.log('\n## Withdrawals (PostgreSQL)\n');
  console.log('| run | calls/s | p50 ms | p99 ms | failures |');
  console.log('|---|---|---|---|---|');
  for (const [name, m] of rows) console.log(`| ${name} | ${m.reqPerSec.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.failures} |`);
  console.log(`\nsingle-item / create: ${ratio.toFixed(2)} (target >= 0.5)`);
  console.log(`100-item batches: ${itemsPerSec.toFixed(0)} items/s (target >= 2000)`);
  const held = await app.db.prisma.withdrawal.count();
  console.log(`withdrawals created: ${held}; sent by the worker during the runs: ${await app.db.prisma.withdrawal.count({ where: { stage: 'sent' } })}`);
  if (rows.some(([, m]) => m.failures > 0)) {
    console.log('FAILED: some requests failed');
    failed = true;
  }
  if (ratio < 0.5 || itemsPerSec < 2000) {
    console.log('MISSED: a withdrawal speed target');
    failed = true;
  }
} finally {
  await app.stop();
  await database.drop();
}
process.exit(failed ? 1 : 0);
