// Payment processing throughput: confirmed sandbox transfers applied to invoices (POST /api/sandbox/transfers),
// each paying its own invoice, created and proceeded before the timed window. Every transfer is final on
// arrival, so each success is one full payment transaction (lock, transfer, ledger, status done, events).
import { fileURLToPath } from 'node:url';
import type { App } from '../src/app.ts';
import { verifyLedger, type LedgerProblem } from '../src/ledger/verify.ts';
import { log } from './common.ts';
import { run, toMeasurement, type Measurement } from './load.ts';

const INVOICE_BODY = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Bench payment', price: 100 }] });
const PROCEED_BODY = JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'trc20usdt' });
/** trc20usdt's required confirmations: the transfer is confirmed by the report itself. */
const CONFIRMATIONS = 19;
const VERIFY_TRANSFER = fileURLToPath(new URL('./verify-transfer.cjs', import.meta.url));

export interface PaymentSettings {
  connections: number;
  /** Cap of the timed run; it ends earlier when the prepared invoices run out. */
  durationSec: number;
  /** Invoices prepared for the timed run, and separately for the warm-up. */
  invoices: number;
  warmupInvoices: number;
  /** Concurrent create + proceed chains while preparing. */
  prepareConcurrency: number;
}

export interface PaymentResult {
  prepared: number;
  prepareSec: number;
  /** reqPerSec counts confirmed transfers only. */
  run: Measurement;
  confirmed: number;
  warmupConfirmed: number;
  /** Invoices in status done afterwards; should equal warmupConfirmed + confirmed. */
  doneInvoices: number;
  consistent: boolean;
  ledger: { ok: boolean; journals: number; entries: number; problems: LedgerProblem[] };
}

async function post(url: string, headers: Record<string, string>, body: string, expected: number): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== expected) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** Creates and proceeds `count` invoices; returns the transfer body that pays each in full. */
async function prepareTransfers(app: App, auth: Record<string, string>, count: number, concurrency: number): Promise<string[]> {
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

/** Pays each body's invoice once at `connections`; returns the measurement and the confirmed count. */
async function payAll(app: App, auth: Record<string, string>, bodies: string[], connections: number, durationSec: number) {
  const r = await run(
    { url: `${app.url}/api/sandbox/transfers`, method: 'POST', headers: auth, bodies, maxRequests: bodies.length, verifyBody: VERIFY_TRANSFER },
    connections,
    durationSec,
  );
  const responses = Object.values(r.statusCodeStats).reduce((sum, s) => sum + s.count, 0);
  // verify-transfer.cjs fails every body that is not a confirmed transfer, error bodies included.
  const confirmed = responses - r.mismatches;
  const m = toMeasurement(r, confirmed);
  // r.errors already counts timeouts.
  m.failures = responses - confirmed + r.errors;
  return { m, confirmed };
}

export async function benchPayments(app: App, auth: Record<string, string>, s: PaymentSettings, label: string): Promise<PaymentResult> {
  const t0 = Date.now();
  const total = s.invoices + s.warmupInvoices;
  log(`${label}: preparing ${total} proceeded invoices`);
  const bodies = await prepareTransfers(app, auth, total, s.prepareConcurrency);
  const prepareSec = (Date.now() - t0) / 1000;
  log(`${label}: prepared in ${prepareSec.toFixed(1)} s`);

  // The warm-up pays its own invoices; a generous cap, it normally ends when they run out.
  const warmup = await payAll(app, auth, bodies.slice(0, s.warmupInvoices), s.connections, s.durationSec);
  log(`${label}: payments`);
  const { m, confirmed } = await payAll(app, auth, bodies.slice(s.warmupInvoices), s.connections, s.durationSec);
  log(`${label}: payments ${Math.round(m.reqPerSec)} transfers/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILURES` : ''}`);

  const doneInvoices = await app.db.prisma.invoice.count({ where: { status: 'done' } });
  const ledger = await verifyLedger(app.db.prisma);
  log(`${label}: ${doneInvoices} invoices done, ${warmup.confirmed} + ${confirmed} transfers confirmed; ledger ${ledger.ok ? 'ok' : `${ledger.problems.length} problems`}`);
  return {
    prepared: total,
    prepareSec,
    run: m,
    confirmed,
    warmupConfirmed: warmup.confirmed,
    doneInvoices,
    consistent: doneInvoices === warmup.confirmed + confirmed,
    ledger: { ok: ledger.ok, journals: ledger.journals, entries: ledger.entries, problems: ledger.problems.slice(0, 10) },
  };
}
