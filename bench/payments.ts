// Payment processing throughput: confirmed sandbox transfers applied to invoices (POST /api/sandbox/transfers),
// each paying its own invoice, created and proceeded before the timed window. Every transfer is final on
// arrival, so each success is one full payment transaction (lock, transfer, ledger, status done, events).
import { fileURLToPath } from 'node:url';
import type { App } from '../src/app.ts';
import { verifyLedger } from '../src/features.ts';
import type { LedgerProblem } from '../src/ledger/verify.ts';
import { log, postJson } from './common.ts';
import { run, toMeasurement, type LoadTarget, type Measurement } from './load.ts';

const INVOICE_BODY = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Bench payment', price: 100 }] });
const PROCEED_BODY = JSON.stringify({ clientEmail: 'bench@example.com', paymentCurrency: 'trc20usdt' });
/** trc20usdt's required confirmations: the transfer is confirmed by the report itself. */
const CONFIRMATIONS = 19;
const VERIFY_TRANSFER = fileURLToPath(new URL('./verify-transfer.cjs', import.meta.url));

export interface PaymentSettings {
  connections: number;
  /** Intended length of each timed run; a payment run's invoice count is sized from the previous rate to last about this long. */
  durationSec: number;
  /**
   * Rounds of a REST create run right before a payment run: each round's ratio compares runs seconds apart, and the
   * result is their median (the machine's speed drifts over the minute between the main create run and this one).
   */
  rounds: number;
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

/** One round: confirmed payments per second over the REST creates per second of the run right before. */
export interface PaymentRound {
  create: Measurement;
  payments: Measurement;
  ratio: number;
}

export interface PaymentResult {
  /** Invoices created and proceeded (warm-up + timed runs), and how long that took. */
  prepared: number;
  prepareSec: number;
  rounds: PaymentRound[];
  /** The median round's ratio, and that round's payment run (reqPerSec counts confirmed transfers only). */
  ratio: number;
  run: Measurement;
  /** Transfers of the timed runs, and those confirmed. */
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

export async function benchPayments(app: App, auth: Record<string, string>, s: PaymentSettings, label: string, create: LoadTarget): Promise<PaymentResult> {
  const capSec = 4 * s.durationSec;
  // Every payment run must end by count, not by time: a run cut by time abandons in-flight transfers that still
  // commit, and the done-invoice check could not match. So each is sized from the rate of the one before.
  const sized = (rate: number, sec: number) => Math.round(Math.min(s.maxInvoices, Math.max(4 * s.connections, rate * sec)));
  let prepareSec = 0;
  let prepared = 0;
  const prepare = async (count: number) => {
    const t0 = Date.now();
    const bodies = await prepareTransfers(app, auth, count, s.prepareConcurrency);
    prepareSec += (Date.now() - t0) / 1000;
    prepared += bodies.length;
    return bodies;
  };
  const first = await payAll(app, auth, await prepare(s.warmupInvoices), s.connections, capSec);
  const rest = await payAll(app, auth, await prepare(sized(first.m.reqPerSec, s.warmupSec)), s.connections, capSec);
  const warmup = { confirmed: first.confirmed + rest.confirmed, complete: first.complete && rest.complete };
  log(`${label}: warm-up ${warmup.confirmed} payments (${Math.round(first.m.reqPerSec)}, then ${Math.round(rest.m.reqPerSec)} transfers/s)`);

  const rounds: PaymentRound[] = [];
  let rate = rest.m.reqPerSec;
  let invoices = 0;
  let confirmed = 0;
  let complete = warmup.complete;
  for (let round = 1; round <= s.rounds; round++) {
    const bodies = await prepare(sized(rate, s.durationSec));
    const creates = toMeasurement(await run(create, s.connections, s.durationSec));
    const paid = await payAll(app, auth, bodies, s.connections, capSec);
    const m = paid.m;
    const ratio = creates.reqPerSec > 0 ? m.reqPerSec / creates.reqPerSec : 0;
    rounds.push({ create: creates, payments: m, ratio });
    rate = m.reqPerSec;
    invoices += bodies.length;
    confirmed += paid.confirmed;
    complete &&= paid.complete;
    log(`${label}: round ${round}: ${Math.round(creates.reqPerSec)} creates/s, then ${Math.round(m.reqPerSec)} transfers/s (${Math.round(100 * ratio)}%), p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILURES` : ''}`);
  }
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)]!;

  const doneInvoices = await app.db.prisma.invoice.count({ where: { status: 'done' } });
  const ledger = await verifyLedger(app.db.prisma);
  log(`${label}: ${doneInvoices} invoices done, ${warmup.confirmed} + ${confirmed} transfers confirmed; ledger ${ledger.ok ? 'ok' : `${ledger.problems.length} problems`}`);
  return {
    prepared,
    prepareSec,
    rounds,
    ratio: median.ratio,
    run: median.payments,
    invoices,
    confirmed,
    warmupConfirmed: warmup.confirmed,
    doneInvoices,
    complete,
    ledger: { ok: ledger.ok, journals: ledger.journals, entries: ledger.entries, problems: ledger.problems.slice(0, 10) },
  };
}
