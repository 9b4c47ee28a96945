// The mixed load: actors pick a tenant (a merchant in test or live mode) and an operation at random from their own
// seeded stream, through the proxy: invoices created, filled and paid (in full, in two parts, short, late), short
// ones refunded, withdrawals single and bulk, static deposit addresses and deposits to them, sandbox withdrawals
// confirmed, balances read. Live payments go to anvil from its funded accounts. Every 2xx write is recorded.
import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { getAddress, type Address } from 'viem';
import { randomBytes } from 'node:crypto';
import type { Anvil } from '../../test/support/anvil-node.ts';
import { call, type Answer } from './api.ts';
import type { Ledger, Tenant } from './model.ts';
import type { Rng } from './rng.ts';

export interface LoadContext {
  baseUrl: string;
  tenants: Tenant[];
  ledger: Ledger;
  db: pg.Pool;
  anvil: Anvil;
  /** Payments on anvil from one account at a time (nonces). */
  payers: Payers;
}

export const randomEvmAddress = (): Address => getAddress(`0x${randomBytes(20).toString('hex')}`);

export class Payers {
  private readonly queues: Promise<unknown>[];
  private turn = 0;
  constructor(private readonly anvil: Anvil) {
    this.queues = anvil.payers.map(() => Promise.resolve());
  }
  pay(to: string, eth: string): Promise<string> {
    const i = this.turn++ % this.queues.length;
    const sent = this.queues[i]!.then(() => this.anvil.pay(to as Address, eth, i));
    this.queues[i] = sent.catch(() => undefined);
    return sent;
  }
}

type Op = (t: Tenant, rng: Rng, ctx: LoadContext) => Promise<string>;

const ok = (a: Answer, status: number) => a.status === status;
const eth = (v: Decimal.Value) => new Decimal(v).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed();

async function createInvoice(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  const usd = t.mode === 'test' && rng.chance(0.3);
  const price = usd ? String(rng.int(5, 200)) : eth(new Decimal(rng.int(10, 200)).div(t.mode === 'live' ? 4000 : 1000));
  const res = await call(ctx.baseUrl, 'POST', '/api/invoices/v1/regular', { token: t.token, json: { invoiceCurrency: usd ? 'usd' : 'eth', items: [{ name: 'Soak order', price }] } });
  if (!ok(res, 201)) return `refused ${res.status}`;
  ctx.ledger.acked.push({ kind: 'invoice', id: res.body.id, tenantId: t.tenantId });
  t.created.push(res.body.id);
  return 'ok';
}

async function proceed(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  const id = takeRandom(t.created, rng);
  if (!id) return createInvoice(t, rng, ctx);
  const paymentCurrency = t.mode === 'live' ? 'eth' : rng.pick(['eth', 'eth', 'btc', 'trc20usdt']);
  const res = await call(ctx.baseUrl, 'POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });
  if (!ok(res, 200)) return `refused ${res.status}`;
  ctx.ledger.acked.push({ kind: 'proceed', id, tenantId: t.tenantId });
  t.pending.push({ id, amount: res.body.paymentDetails.amount, address: res.body.address.address });
  return 'ok';
}

async function sandboxTransfer(t: Tenant, ctx: LoadContext, json: Record<string, unknown>): Promise<Answer> {
  const res = await call(ctx.baseUrl, 'POST', '/api/sandbox/transfers', { token: t.token, json });
  if (ok(res, 201)) ctx.ledger.acked.push({ kind: 'transfer', id: res.body.id, tenantId: t.tenantId });
  return res;
}

/** Pays an open invoice: in full, in two parts (the first seen, then confirmed), or short (it becomes wrong). */
function pay(kind: 'full' | 'split' | 'short'): Op {
  return async (t, rng, ctx) => {
    const invoice = takeRandom(t.pending, rng);
    if (!invoice) return proceed(t, rng, ctx);
    const amount = new Decimal(invoice.amount);
    if (t.mode === 'live') {
      const sent = kind === 'short' ? amount.div(2).toDecimalPlaces(8, Decimal.ROUND_DOWN) : amount;
      await ctx.payers.pay(invoice.address, sent.toFixed());
      if (kind === 'short') t.wrong.push(invoice.id);
      return 'ok';
    }
    if (kind === 'full') return (await sandboxTransfer(t, ctx, { invoiceId: invoice.id, amount: amount.toFixed(), confirmations: 100 })).status === 201 ? 'ok' : 'refused';
    if (kind === 'short') {
      const res = await sandboxTransfer(t, ctx, { invoiceId: invoice.id, amount: amount.div(2).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed(), confirmations: 100 });
      if (res.status === 201 && invoice.id) t.wrong.push(invoice.id);
      return res.status === 201 ? 'ok' : 'refused';
    }
    const first = amount.div(2).toDecimalPlaces(6, Decimal.ROUND_DOWN);
    const seen = await sandboxTransfer(t, ctx, { invoiceId: invoice.id, amount: first.toFixed(), confirmations: 0 });
    if (seen.status !== 201) return 'refused';
    const confirmed = await call(ctx.baseUrl, 'POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: t.token, json: {} });
    if (confirmed.status !== 200) return 'refused';
    const rest = await sandboxTransfer(t, ctx, { invoiceId: invoice.id, amount: amount.minus(first).toFixed(), confirmations: 100 });
    return rest.status === 201 ? 'ok' : 'refused';
  };
}

async function refund(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  const id = takeRandom(t.wrong, rng);
  if (!id) return 'nothing to refund';
  const res = await call(ctx.baseUrl, 'POST', `/api/invoices/v1/regular/${id}/refund`, { token: t.token, json: { address: randomEvmAddress() } });
  // 409 while the short payment is not confirmed yet (live): try it again later.
  if (res.status === 409 && t.mode === 'live') t.wrong.push(id);
  if (!ok(res, 200)) return `refused ${res.status}`;
  ctx.ledger.acked.push({ kind: 'refund', id, tenantId: t.tenantId });
  return 'ok';
}

/** Closes the tenant's open invoices on its test clock, then pays one of them: a late payment. */
async function latePayment(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  if (t.mode !== 'test' || t.pending.length === 0) return proceed(t, rng, ctx);
  const advanced = await call(ctx.baseUrl, 'POST', '/api/sandbox/clock/advance', { token: t.token, json: { minutes: 31 } });
  if (advanced.status !== 200) return `refused ${advanced.status}`;
  return pay('full')(t, rng, ctx);
}

function withdraw(items: [number, number]): Op {
  return async (t, rng, ctx) => {
    const n = rng.int(items[0], items[1]);
    const list = Array.from({ length: n }, () => ({ amount: eth(new Decimal(rng.int(1, 8)).div(1000)), tag: '', to: randomEvmAddress(), asset: 'eth' }));
    const res = await call(ctx.baseUrl, 'POST', '/api/transactions/withdraw', { token: t.token, json: { items: list } });
    if (!ok(res, 200)) return `refused ${res.status}`;
    let accepted = 0;
    for (const r of res.body as { success: boolean; uid: string }[]) {
      if (!r.success) continue;
      accepted++;
      ctx.ledger.acked.push({ kind: 'withdrawal', id: r.uid, tenantId: t.tenantId });
    }
    return accepted ? 'ok' : 'refused (balance)';
  };
}

async function deposit(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  let target = t.staticAddresses.length && rng.chance(0.6) ? rng.pick(t.staticAddresses) : null;
  if (!target) {
    const res = await call(ctx.baseUrl, 'POST', '/api/static-addresses', { token: t.token, json: { asset: 'eth', internalUserId: `player-${rng.int(1, 1_000_000)}` } });
    if (res.status !== 201 && res.status !== 200) return `refused ${res.status}`;
    ctx.ledger.acked.push({ kind: 'static-address', id: res.body.id, tenantId: t.tenantId });
    target = { id: res.body.id, address: res.body.address };
    t.staticAddresses.push(target);
  }
  const amount = eth(new Decimal(rng.int(5, 50)).div(1000));
  if (t.mode === 'live') {
    await ctx.payers.pay(target.address, amount);
    return 'ok';
  }
  const res = await sandboxTransfer(t, ctx, { address: target.address, amount, confirmations: 100 });
  return res.status === 201 ? 'ok' : `refused ${res.status}`;
}

/** Test mode: the sandbox chain's outcome of withdrawals on chain (mostly confirmed, some rejected). */
async function settleSandboxWithdrawals(t: Tenant, rng: Rng, ctx: LoadContext): Promise<string> {
  if (t.mode !== 'test') return 'skipped';
  const { rows } = await ctx.db.query<{ uid: string }>(
    `SELECT "uid"::text AS uid FROM "Withdrawal" WHERE "companyId" = $1 AND "status" = 'processing' AND "stage" = 'sent' LIMIT 5`,
    [t.tenantId],
  );
  let done = 0;
  for (const { uid } of rows) {
    const outcome = rng.chance(0.9) ? 'confirm' : 'reject';
    const res = await call(ctx.baseUrl, 'POST', `/api/sandbox/withdrawals/${uid}/${outcome}`, { token: t.token, json: {} });
    if (res.status === 200) {
      done++;
      ctx.ledger.acked.push({ kind: 'withdrawal-confirm', id: uid, tenantId: t.tenantId, detail: outcome === 'confirm' ? 'done' : 'rejected' });
    }
  }
  return done ? 'ok' : 'nothing to settle';
}

async function readBalances(t: Tenant, _rng: Rng, ctx: LoadContext): Promise<string> {
  const res = await call(ctx.baseUrl, 'GET', '/api/company/balances', { token: t.token });
  if (res.status !== 200) return `refused ${res.status}`;
  for (const b of res.body.balances as { asset: string; available: string; held: string }[]) {
    for (const account of ['available', 'held'] as const) {
      if (new Decimal(b[account]).isNegative()) ctx.ledger.negativeBalances.push(`${t.label} ${b.asset} ${account} ${b[account]}`);
    }
  }
  return 'ok';
}

const TEST_OPS: Record<string, [number, Op]> = {
  'invoice.create': [20, createInvoice],
  'invoice.proceed': [18, proceed],
  'invoice.pay': [12, pay('full')],
  'invoice.pay-in-two-parts': [5, pay('split')],
  'invoice.pay-short': [5, pay('short')],
  'invoice.refund': [4, refund],
  'invoice.pay-late': [1, latePayment],
  'withdraw.single': [6, withdraw([1, 1])],
  'withdraw.bulk': [3, withdraw([2, 5])],
  'deposit.static': [4, deposit],
  'sandbox.settle-withdrawals': [6, settleSandboxWithdrawals],
  'balances.read': [4, readBalances],
};

const LIVE_OPS: Record<string, [number, Op]> = {
  'invoice.create': [10, createInvoice],
  'invoice.proceed': [10, proceed],
  'invoice.pay': [8, pay('full')],
  'invoice.pay-short': [3, pay('short')],
  'invoice.refund': [3, refund],
  'withdraw.single': [4, withdraw([1, 1])],
  'withdraw.bulk': [2, withdraw([2, 4])],
  'deposit.static': [2, deposit],
  'balances.read': [3, readBalances],
};

function takeRandom<T>(list: T[], rng: Rng): T | undefined {
  if (list.length === 0) return undefined;
  return list.splice(Math.floor(rng.next() * list.length), 1)[0];
}

/** One actor: operations one after another until `until()` says stop. */
export async function actor(rng: Rng, ctx: LoadContext, running: () => boolean, pauseMs: [number, number]): Promise<void> {
  while (running()) {
    const t = rng.pick(ctx.tenants);
    const ops = t.mode === 'test' ? TEST_OPS : LIVE_OPS;
    const name = rng.weighted(Object.fromEntries(Object.entries(ops).map(([k, [w]]) => [k, w])));
    const kind = `${t.mode}:${name}`;
    try {
      const outcome = await ops[name]![1](t, rng, ctx);
      ctx.ledger.ops.add(outcome === 'ok' ? kind : `${kind} (${outcome.startsWith('refused') ? 'refused' : 'skipped'})`);
    } catch {
      // A connection cut by a killed instance or a terminated database session: not acknowledged, nothing recorded.
      ctx.ledger.ops.add(`${kind} (no answer)`);
    }
    await new Promise((r) => setTimeout(r, rng.int(pauseMs[0], pauseMs[1])));
  }
}
