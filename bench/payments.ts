// Payment processing throughput: confirmed sandbox transfers applied to invoices (POST /api/sandbox/transfers),
// each paying its own invoice, created and proceeded before the timed window. Every transfer is final on
// arrival, so each success is one full payment transaction (lock, transfer, ledger, status done, events).
import { fileURLToPath } from 'node:url';
import type { App } from '../src/app.ts';
import { verifyLedger } from '../src/features.ts';
import type { LedgerProblem } from '../src/ledger/verify.ts';
import { log, postJson } from './common.ts';
import { run, toMeasurement, type Measurement } from './load.ts';

const INVOICE_BODY = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Bench payment', price: 100 }] });
const PROCEED_BODY = JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'trc20usdt' });
/** trc20usdt's required confirmations: the transfer is confirmed by the report itself. */
const CONFIRMATIONS = 19;
const VERIFY_TRANSFER = fileURLToPath(new URL('./verify-transfer.cjs', import.meta.url));

export interface PaymentSettings {
  connections: number;
  /** Intended length of the timed run; its invoice count is sized from the warm-up's rate to last about this long. */
  durationSec: number;
  /**
   * Invoices paid first to learn the rate; then the warm-up goes on for about `warmupSec` of load at that rate, as the
   * other runs' warm-ups do (250 payments alone left the timed run still warming up: half its rate).
   */
  warmupInvoices: number;
  warmupSec: number;
  /** The most invoices one warm-up stage or the timed run may use. */
  maxInvoices: number;
  /** Concurrent create + proceed chains while preparing. */
  prepareConcurrency: number;
}

export interface PaymentResult {
  /** Invoices created and proceeded (warm-up + timed run), and how long that took. */
  prepared: number;
  prepareSec: number;
  /** reqPerSec counts confirmed transfers only. */
  run: Measurement;
  invoices: number;
  confirmed: number;
  warmupConfirmed: number;
  /** Invoices in status done afterwards; equals warmupConfirmed + confirmed when every transfer was answered. */
  doneInvoices: number;
  /** False when a run hit its time cap: abandoned requests may still have paid their invoice. */
  complete: boolean;
  ledger: { ok: boolean; journals: number; entries: number; problems: LedgerProblem[] };
}

async function post(url: string, headers: Record<string, string>, body: string, expected: number): Promise<Record<string, unknown>> {
  const { status, json } = await postJson(url, headers, body);
  if (status !== expected) throw new Error(`POST ${url}: ${status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** Creates and proceeds `count` invoices; returns the transfer body that pays each in full. */
export async function prepareTransfers(app: App, auth: Record<string, string>, count: number, concurrency: number): Promise<string[]> {
  const bodies: string[] = [];
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      const { id } = (await post(`${app.url}/api/invoices/v1/regular`, auth, INVOICE_BODY, 201)) as { id: string };
      const filled = await post(`${app.url}/api/invoices/v1/regular/${id}/proceed`, { 'content-type': 'application/json' }, PROCEED_BODY, 200);
      const amount = (filled['paymentDetails'] as { amount?: unknown } | undefined)?.amount;
      if (typeof amount !== 'string') throw new Error(`proceed ${id}: no paymentDetails.amount`);
      bodies.push(JSON.stringify({ invoiceId: id, amount, confirmations: CONFIRMATIONS }));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return bodies;
}

/** Pays each body's invoice once, at `connections`, giving up after `capSec`. */
async function payAll(app: App, auth: Record<string, string>, bodies: string[], connections: number, capSec: number) {
  const r = await run(
    { url: `${app.url}/api/sandbox/transfers`, method: 'POST', headers: auth, bodies, maxRequests: bodies.length, verifyBody: VERIFY_TRANSFER },
    connections,
    capSec,
  );
  const responses = Object.values(r.statusCodeStats).reduce((sum, x) => sum + x.count, 0);
  // verify-transfer.cjs fails every body that is not a confirmed transfer, error bodies included.
  const confirmed = responses - r.mismatches;
  const m = toMeasurement(r, confirmed);
  m.failures = responses - confirmed + r.errors; // r.errors includes timeouts
  return { m, confirmed, complete: responses === bodies.length };
}

export async function benchPayments(app: App, auth: Record<string, string>, s: PaymentSettings, label: string): Promise<PaymentResult> {
  const capSec = 4 * s.durationSec;
  // Every run must end by count, not by time: a run cut by time abandons in-flight transfers that still commit, and
  // the done-invoice check could not match. So each is sized from the rate of the one before.
  const sized = (rate: number, sec: number) => Math.round(Math.min(s.maxInvoices, Math.max(4 * s.connections, rate * sec)));
  let prepareSec = 0;
  const prepareAndPay = async (count: number) => {
    const t0 = Date.now();
    const bodies = await prepareTransfers(app, auth, count, s.prepareConcurrency);
    prepareSec += (Date.now() - t0) / 1000;
    return payAll(app, auth, bodies, s.connections, capSec);
  };
  const first = await prepareAndPay(s.warmupInvoices);
  const restCount = sized(first.m.reqPerSec, s.warmupSec);
  const rest = await prepareAndPay(restCount);
  const warmup = { confirmed: first.confirmed + rest.confirmed, complete: first.complete && rest.complete, prepared: s.warmupInvoices + restCount };

  const invoices = sized(rest.m.reqPerSec, s.durationSec);
  log(`${label}: warm-up ${warmup.confirmed} payments (${Math.round(first.m.reqPerSec)}, then ${Math.round(rest.m.reqPerSec)} transfers/s); preparing ${invoices} proceeded invoices`);
  const t0 = Date.now();
  const bodies = await prepareTransfers(app, auth, invoices, s.prepareConcurrency);
  prepareSec += (Date.now() - t0) / 1000;

  log(`${label}: payments`);
  const { m, confirmed, complete } = await payAll(app, auth, bodies, s.connections, capSec);
  log(`${label}: payments ${Math.round(m.reqPerSec)} transfers/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILURES` : ''}`);

  const doneInvoices = await app.db.prisma.invoice.count({ where: { status: 'done' } });
  const ledger = await verifyLedger(app.db.prisma);
  log(`${label}: ${doneInvoices} invoices done, ${warmup.confirmed} + ${confirmed} transfers confirmed; ledger ${ledger.ok ? 'ok' : `${ledger.problems.length} problems`}`);
  return {
    prepared: warmup.prepared + bodies.length,
    prepareSec,
    run: m,
    invoices,
    confirmed,
    warmupConfirmed: warmup.confirmed,
    doneInvoices,
    complete: warmup.complete && complete,
    ledger: { ok: ledger.ok, journals: ledger.journals, entries: ledger.entries, problems: ledger.problems.slice(0, 10) },
  };
}
