// The common report is booked in one statement (src/payments/booking.ts); a merchant with a credit-hook rule (here
// an auto-withdrawal whose threshold is never reached) takes the general transaction for the same reports. Both
// must write the same: transfer rows, journals (kinds, accounts, amounts, order), invoice fields and events
// (types, payloads, order), for a full, a partial then topped-up, an over- and a late payment, a seen transfer
// confirmed later and a duplicate report.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TransferReport } from '../../src/chains/adapter.ts';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { watchStatements } from '../support/statements.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** Counts the one statements tried and the reports they booked meanwhile (that statement answers the transfer it wrote). */
async function countOneStatement<T>(server: TestServer, fn: () => Promise<T>): Promise<{ result: T; booked: number; tried: number }> {
  let booked = 0;
  let tried = 0;
  const result = await watchStatements(
    server,
    (text) => {
      if (!text.includes('new_transfer AS (INSERT INTO "ChainTransfer"')) return;
      tried++;
      return (rows) => void (booked += rows.length ? 1 : 0);
    },
    fn,
  );
  return { result, booked, tried };
}

async function filledInvoice(server: TestServer, m: TestMerchant, orderId = 'o-1'): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }], orderId, metadata: { k: 'v' } } });
  expect(created.status, created.text).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
  expect(filled.status, filled.text).toBe(200);
  return created.body.id as string;
}

type Step = { pay: { amount: string; confirmations: number; txHash?: string } } | { confirm: number } | { advance: number };

/** Runs the steps on a new invoice of `m`; answers what the invoice's reports wrote, with ids made positional. */
async function scenario(server: TestServer, m: TestMerchant, steps: Step[]) {
  const id = await filledInvoice(server, m);
  const transfers: string[] = [];
  let booked = 0;
  for (const step of steps) {
    if ('advance' in step) {
      expect((await server.request('POST', '/api/sandbox/clock/advance', { token: m.publicToken, json: { minutes: step.advance } })).status).toBe(200);
      continue;
    }
    const { result: res, booked: n } = await countOneStatement(server, () =>
      'pay' in step
        ? server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, ...step.pay } })
        : server.request('POST', `/api/sandbox/transfers/${transfers[step.confirm]}/confirm`, { token: m.publicToken, json: {} }),
    );
    expect(res.status, res.text).toBeLessThan(300);
    booked += n;
    if (!transfers.includes(res.body.id)) transfers.push(res.body.id);
  }
  return { booked, written: await written(server, id, transfers) };
}

/** What the reports to invoice `id` wrote, with ids made positional (`transfers`: in the order they were reported). */
async function written(server: TestServer, id: string, transfers: string[]) {
  const db = server.app.db.prisma;
  const name = (s: string) => (s === id ? 'INVOICE' : transfers.includes(s) ? `T${transfers.indexOf(s)}` : s);
  // In the order they were written (a payee looked up earlier carries the lookup's time as seenAt).
  const rows = await db.chainTransfer.findMany({ where: { invoiceId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const hashes = rows.map((r) => r.txHash);
  const anon = (v: unknown): unknown => (typeof v === 'string' ? (hashes.includes(v) ? `H${hashes.indexOf(v)}` : name(v)) : v);
  const invoice = await db.invoice.findUniqueOrThrow({ where: { id } });
  const entries = await db.ledgerEntry.findMany({ where: { invoiceId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const events = await db.event.findMany({ where: { subjectId: id }, orderBy: { seq: 'asc' } });
  const deliveries = await db.webhookDelivery.count({ where: { event: { subjectId: id } } });
  return {
    transfers: rows.map((r) => ({ id: name(r.id), state: r.state, role: r.role, amount: r.amount.toFixed(), confirmations: r.confirmations })),
    invoice: {
      status: invoice.status,
      paidAmount: invoice.paidAmount.toFixed(),
      overpaidAmount: invoice.overpaidAmount.toFixed(),
      feeCharged: invoice.feeCharged?.toFixed() ?? null,
      settled: invoice.settledAt !== null,
    },
    entries: entries.map((e) => ({ kind: e.kind, account: e.account, amount: e.amount.toFixed(), transfer: e.transferId ? name(e.transferId) : null })),
    // Journals in the order they were written: a credit before its fee.
    journals: [...new Set(entries.map((e) => e.journalId))].length,
    events: events.map((e) => ({ type: e.type, payload: Object.fromEntries(Object.entries(e.payload as Record<string, unknown>).map(([k, v]) => [k, anon(v)])) })),
    deliveries,
  };
}

/** booked: how many reports of the plain and of the hooked merchant are booked in one statement. */
const SCENARIOS: Record<string, { steps: Step[]; booked: [number, number] }> = {
  full: { steps: [{ pay: { amount: '101', confirmations: 19 } }], booked: [1, 0] },
  'partial, then topped up': { steps: [{ pay: { amount: '50', confirmations: 19 } }, { pay: { amount: '51', confirmations: 19 } }], booked: [2, 0] },
  over: { steps: [{ pay: { amount: '150', confirmations: 19 } }], booked: [1, 0] },
  late: { steps: [{ advance: 31 }, { pay: { amount: '101', confirmations: 19 } }], booked: [1, 0] },
  // A seen transfer credits nothing (no hook runs): one statement for both; its confirmation is a known transfer.
  'seen, then confirmed': { steps: [{ pay: { amount: '101', confirmations: 0 } }, { confirm: 0 }], booked: [1, 1] },
  'reported twice': { steps: [{ pay: { amount: '101', confirmations: 19, txHash: 'dup0000000000001' } }, { pay: { amount: '101', confirmations: 19, txHash: 'dup0000000000001' } }], booked: [1, 0] },
};

describe.each(DATABASES)('one-statement payments on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it.each(Object.entries(SCENARIOS))('%s: the same transfers, journals, invoice and events as the general transaction', async (label, { steps, booked }) => {
    const plain = await server.merchant();
    const hooked = await server.merchant();
    const rule = await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: hooked.publicToken,
      json: { assets: { trc20usdt: { amount: '1000000', isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON_ADDRESS } } },
    });
    expect(rule.status, rule.text).toBe(200);
    // The txHash of 'reported twice' is per chain, not per merchant: each merchant gets its own.
    const forMerchant = (suffix: string) => steps.map((s) => ('pay' in s && s.pay.txHash ? { pay: { ...s.pay, txHash: s.pay.txHash + suffix } } : s));

    const fast = await scenario(server, plain, forMerchant('a'));
    const general = await scenario(server, hooked, forMerchant('b'));
    expect(fast.written, label).toEqual(general.written);
    expect([fast.booked, general.booked]).toEqual(booked);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('a payee looked up before its invoice changed is booked the general way, as if looked up afterwards', async () => {
    const { payments } = server.app.services;
    // The reference: 50, then 51, each looked up when it is reported.
    const fresh = await scenario(server, await server.merchant(), SCENARIOS['partial, then topped up']!.steps);
    expect(fresh.booked).toBe(2);

    const m = await server.merchant();
    const id = await filledInvoice(server, m);
    const [payee] = await payments.findPayees('test', [{ invoiceId: id }]);
    expect(payee).toMatchObject({ invoiceId: id, s_status: 'pending' });
    // Meanwhile a transfer pays 50: the invoice's row and its totals change after the lookup.
    const first = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: '50', confirmations: 19 } });
    expect(first.status, first.text).toBe(201);
    const report: TransferReport = {
      network: 'tron', asset: 'trc20usdt', txHash: `stale${randomUUID().replaceAll('-', '')}`, outputIndex: 0, from: null, to: payee!.address, tag: payee!.tag,
      amount: new Money('51'), confirmations: 19, blockNumber: null, dropped: false,
    };
    const { result: second, tried, booked } = await countOneStatement(server, () => payments.report(report, 'test', payee));
    // The statement saw another row version and wrote nothing; the transaction booked it on what holds now.
    expect([tried, booked]).toEqual([1, 0]);
    expect(await written(server, id, [first.body.id, second.id])).toEqual(fresh.written);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('one lookup finds the payees of several addresses and invoices, each only in its mode', async () => {
    const { payments } = server.app.services;
    const m = await server.merchant();
    const [a, b] = [await filledInvoice(server, m, 'o-a'), await filledInvoice(server, m, 'o-b')];
    const addressOf = async (invoiceId: string) => server.app.db.prisma.paymentAddress.findUniqueOrThrow({ where: { invoiceId } });
    const [addressA, addressB] = [await addressOf(a), await addressOf(b)];
    const found = await payments.findPayees('test', [
      { network: 'tron', to: addressA.address, tag: addressA.tag },
      { invoiceId: b },
      { network: 'ethereum', to: addressA.address, tag: null },
      { companyId: m.companyId, to: addressB.address, tag: addressB.tag },
    ]);
    expect(found.map((p) => p?.invoiceId ?? null)).toEqual([a, b, null, b]);
    expect(found[0]).toMatchObject({ s_status: 'pending', s_unconfirmed: 0, s_hooked: false });
    expect(await payments.findPayees('live', [{ invoiceId: a }])).toEqual([null]);
    // Two addresses of one network in the same form: the one of the asset sent.
    const trx = await server.app.db.prisma.paymentAddress.create({ data: { id: randomUUID(), companyId: m.companyId, asset: 'trx', address: addressA.address, tag: null } });
    const byAsset = await payments.findPayees('test', [
      { network: 'tron', to: addressA.address, tag: null, asset: 'trx' },
      { network: 'tron', to: addressA.address, tag: null, asset: 'trc20usdt' },
    ]);
    expect(byAsset.map((p) => p?.id)).toEqual([trx.id, addressA.id]);
  });
});
