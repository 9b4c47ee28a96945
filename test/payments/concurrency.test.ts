// Concurrency: a burst of chain reports for many invoices at once, with every transfer reported twice. Each
// invoice must end paid exactly once: one transfer row per distinct (txHash, outputIndex), one credit per
// transfer, one fee, the events in order, and a ledger that still balances. The same in both modes of one merchant,
// live mode on an anvil node.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { checkApiExchange } from '../support/contract.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

const INVOICES = 50;
const MESSAGES = {
  created: 'Invoice created',
  pending: "User started payment process, but hasn't paid yet",
  wrong: 'The payment amount is lower than the amount stated on the invoice',
  done: 'Invoice paid',
};

/** Runs `fn` over `items` with at most `limit` calls in flight (keeps the set-up from being the stress test). */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The burst's requests, with a longer bound than TestServer.request's 15 s: on PGlite all 200 transactions queue on
 * one connection, and a loaded machine must not turn that queue into a client-side timeout.
 */
async function postReport(server: TestServer, token: string, json: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${server.url}/api/sandbox/transfers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  checkApiExchange({ method: 'POST', path: '/api/sandbox/transfers', status: res.status, contentType: res.headers.get('content-type'), text });
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

async function filledInvoice(server: TestServer, token: string): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', {
    token,
    json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] },
  });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, {
    json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' },
  });
  expect(proceeded.status, proceeded.text).toBe(200);
  expect(proceeded.body.status).toBe('pending');
  expect(proceeded.body.paymentDetails).toEqual({ rate: '1', invoiceFee: '1', amount: '101', paidAmount: '0', overpaidAmount: '0', rateSources: expect.any(Object) });
  return id;
}

describe.each(DATABASES)('concurrent transfer reports on %s', { timeout: 240_000 }, (kind) => {
  const server = useServer(kind);

  it('200 concurrent reports (2 halves per invoice, each reported twice) settle 50 invoices exactly once', async () => {
    const merchant = await server.merchant();
    const token = merchant.publicToken;
    const invoiceIds = await mapLimit(Array.from({ length: INVOICES }, (_, i) => i), 8, () => filledInvoice(server, token));
    expect(new Set(invoiceIds).size).toBe(INVOICES);

    // Two distinct transactions per invoice, each paying half; every report is sent twice.
    const hashes = new Map(invoiceIds.map((id) => [id, [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]]));
    const reports = invoiceIds.flatMap((invoiceId) =>
      hashes.get(invoiceId)!.flatMap((txHash) => [0, 1].map(() => ({ invoiceId, amount: '50.5', confirmations: 19, txHash }))),
    );
    expect(reports).toHaveLength(200);
    // Interleave so that duplicates and halves of one invoice are not adjacent.
    for (let i = reports.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [reports[i], reports[j]] = [reports[j]!, reports[i]!];
    }

    const started = Date.now();
    const responses = await Promise.all(reports.map((json) => postReport(server, token, json)));
    const elapsed = Date.now() - started;
    for (const [i, res] of responses.entries()) {
      expect(res.status, `report ${i}: ${res.text}`).toBe(201);
      expect(res.body).toMatchObject({
        invoiceId: reports[i]!.invoiceId,
        txHash: reports[i]!.txHash,
        outputIndex: 0,
        asset: 'trc20usdt',
        amount: '50.5',
        confirmations: 19,
        requiredConfirmations: 19,
        state: 'confirmed',
      });
    }
    // Both reports of one transaction answer the same transfer.
    const idsByHash = new Map<string, Set<string>>();
    for (const res of responses) {
      const set = idsByHash.get(res.body.txHash) ?? new Set<string>();
      set.add(res.body.id);
      idsByHash.set(res.body.txHash, set);
    }
    expect(idsByHash.size).toBe(100);
    for (const [txHash, ids] of idsByHash) expect(ids.size, txHash).toBe(1);
    console.info(`[concurrency ${kind}] 200 reports answered in ${elapsed} ms`);

    // Every invoice is done and paid in full, with its two transfers confirmed.
    for (const id of invoiceIds) {
      const res = await server.request('GET', `/api/invoices/v1/regular/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.status, id).toBe('done');
      expect(res.body.paymentDetails).toEqual({ rate: '1', invoiceFee: '1', amount: '101', paidAmount: '101', overpaidAmount: '0', rateSources: expect.any(Object) });
      const txs = res.body.invoiceTransactions as { txHash: string; amount: string; status: string; kind: string; confirmations: number }[];
      expect(txs).toHaveLength(2);
      expect(txs.map((t) => t.txHash).sort()).toEqual([...hashes.get(id)!].sort());
      for (const t of txs) expect(t).toMatchObject({ amount: '50.5', status: 'confirmed', kind: 'payment', confirmations: 19 });
    }

    const prisma = server.app.db.prisma;
    const where = { invoiceId: { in: invoiceIds } };

    // Exactly one ChainTransfer row per distinct transaction.
    const transfers = await prisma.chainTransfer.findMany({ where });
    expect(transfers).toHaveLength(2 * INVOICES);
    for (const id of invoiceIds) expect(transfers.filter((t) => t.invoiceId === id), id).toHaveLength(2);

    // Events per invoice, in seq order: created, pending, wrong (first half confirmed), done (second half).
    const events = await prisma.event.findMany({ where: { subjectId: { in: invoiceIds }, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } });
    expect(events).toHaveLength(4 * INVOICES);
    for (const id of invoiceIds) {
      const mine = events.filter((e) => e.subjectId === id);
      expect(mine.map((e) => e.type), id).toEqual(['invoice.created', 'invoice.pending', 'invoice.wrong', 'invoice.done']);
      expect(mine.map((e) => e.payload)).toEqual(
        (['created', 'pending', 'wrong', 'done'] as const).map((status) => ({ invoiceId: id, status, message: MESSAGES[status] })),
      );
      for (const e of mine) expect(e.companyId).toBe(merchant.companyId);
    }

    // Ledger: one credit per transfer to the merchant, one fee journal per invoice.
    const entries = await prisma.ledgerEntry.findMany({ where });
    for (const id of invoiceIds) {
      const mine = entries.filter((e) => e.invoiceId === id);
      const credits = mine.filter((e) => e.kind === 'payment' && e.account === 'merchant_available');
      expect(credits, id).toHaveLength(2);
      expect(credits.map((c) => c.amount.toFixed()).sort()).toEqual(['50.5', '50.5']);
      expect(new Set(credits.map((c) => c.transferId))).toEqual(new Set(transfers.filter((t) => t.invoiceId === id).map((t) => t.id)));
      const fees = mine.filter((e) => e.kind === 'fee');
      expect(new Set(fees.map((e) => e.journalId)).size, id).toBe(1);
      expect(fees.map((e) => [e.account, e.amount.toFixed()]).sort()).toEqual([
        ['merchant_available', '-1'],
        ['platform_fees', '1'],
      ]);
      // Nothing else was booked for this invoice: 2 payment journals of 2 entries, 1 fee journal of 2 entries.
      expect(mine).toHaveLength(6);
    }

    const balances = await server.request('GET', '/api/company/balances', { token });
    expect(balances.status, balances.text).toBe(200);
    expect(balances.body).toEqual({ balances: [{ asset: 'trc20usdt', available: '5000', held: '0', pending: '0', suspense: '0' }] });

    const report = await verifyLedger(prisma);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, journals: 3 * INVOICES, entries: 6 * INVOICES });
  });
});

// Both modes at once, live mode on a real node (anvil): live invoices are paid on chain and credited by the node's
// scanner while the same merchant's test invoices get simulated reports naming the very same transaction hashes, all
// in flight together. A transaction output is unique within its mode's chain only: each side is paid exactly once,
// in its own mode, and neither mode's balance sees the other's money.
describe.runIf(ANVIL).each(DATABASES)('concurrent payments in both modes of one merchant on %s (live mode on anvil)', { timeout: 180_000 }, (kind) => {
  const PER_MODE = 20;
  const CONFIRMATIONS = 2;
  const CHAIN_WAIT_MS = 60_000;
  let node: Anvil | undefined;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    node = await startAnvil();
    Object.assign(env, chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100, sweepIntervalMs: 3_600_000 } }));
  });
  afterAll(async () => node?.stop());
  const server = useServer(kind, env);

  it(`${PER_MODE} live payments on anvil and ${2 * PER_MODE} simulated reports of the same hashes at once: each invoice paid once, in its own mode`, async () => {
    const m = await server.liveMerchant();
    const filled = (token: string) =>
      mapLimit(Array.from({ length: PER_MODE }, (_, i) => i), 4, async () => {
        const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'eth', items: [{ name: 'x', price: '0.5' }] } });
        expect(created.status, created.text).toBe(201);
        const proceeded = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'eth' } });
        expect(proceeded.status, proceeded.text).toBe(200);
        return { id: created.body.id as string, address: proceeded.body.address.address as `0x${string}`, amount: proceeded.body.paymentDetails.amount as string };
      });
    const live = await filled(m.live.publicToken);
    const test = await filled(m.test.publicToken);
    // Sent now, mined below: the hashes are known before the chain has them.
    const hashes: string[] = [];
    for (const [i, invoice] of live.entries()) hashes.push(await node!.pay(invoice.address, invoice.amount, i % node!.payers.length));

    // The confirming blocks and the simulated reports (each twice, final at once), together.
    const reports = test.flatMap((invoice, i) => [0, 1].map(() => ({ invoiceId: invoice.id, amount: invoice.amount, confirmations: 12, txHash: hashes[i]! })));
    const [responses] = await Promise.all([Promise.all(reports.map((json) => postReport(server, m.test.publicToken, json))), node!.mine(CONFIRMATIONS)]);
    for (const [i, res] of responses.entries()) {
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ invoiceId: reports[i]!.invoiceId, txHash: reports[i]!.txHash, state: 'confirmed' });
    }
    for (const invoice of live) await eventually(() => server.request('GET', `/api/invoices/v1/regular/${invoice.id}`).then((r) => r.body.status), (s) => s === 'done', CHAIN_WAIT_MS);

    const prisma = server.app.db.prisma;
    for (const [mode, invoices] of [['live', live], ['test', test]] as const) {
      for (const [i, invoice] of invoices.entries()) {
        const read = await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`);
        expect(read.body, invoice.id).toMatchObject({ status: 'done', mode, invoiceTransactions: [expect.objectContaining({ txHash: hashes[i], amount: invoice.amount, status: 'confirmed' })] });
        const transfers = await prisma.chainTransfer.findMany({ where: { invoiceId: invoice.id } });
        expect(transfers.map((t) => [t.mode, t.txHash]), invoice.id).toEqual([[mode, hashes[i]]]);
        const credits = await prisma.ledgerEntry.findMany({ where: { invoiceId: invoice.id, kind: 'payment', account: 'merchant_available' } });
        expect(credits.map((c) => c.transferId), invoice.id).toEqual([transfers[0]!.id]);
        const done = await prisma.event.count({ where: { subjectId: invoice.id, type: 'invoice.done' } });
        expect(done, invoice.id).toBe(1);
      }
    }
    // Each hash twice in all: once on the real chain (live), once on the simulated one (test).
    const byHash = await prisma.chainTransfer.groupBy({ by: ['txHash', 'mode'], where: { txHash: { in: hashes } }, _count: true });
    expect(byHash).toHaveLength(2 * PER_MODE);
    expect(byHash.every((g) => g._count === 1)).toBe(true);
    // Each mode's balance holds its own payments only: 0.5 eth each after its fee.
    for (const token of [m.live.publicToken, m.test.publicToken]) {
      const balances = await server.request('GET', '/api/company/balances', { token });
      expect(balances.body.balances).toEqual([expect.objectContaining({ asset: 'eth', available: String(PER_MODE * 0.5), pending: '0' })]);
    }
    for (const mode of ['live', 'test'] as const) {
      const report = await verifyLedger(prisma, server.app.platform.chains.custodySources(), { mode });
      expect(report.problems, mode).toEqual([]);
      expect(report.ok, mode).toBe(true);
    }
  });
});
