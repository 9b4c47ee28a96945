// The common report is booked in one statement (src/payments/booking.ts); a merchant with a credit-hook rule (here
// an auto-withdrawal whose threshold is never reached) takes the general transaction for the same reports. Both
// must write the same: transfer rows, journals (kinds, accounts, amounts, order), invoice fields and events
// (types, payloads, order), for a full, a partial then topped-up, an over- and a late payment, a seen transfer
// confirmed later and a duplicate report.
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** Counts the reports booked in one statement meanwhile (that statement answers the transfer it wrote). */
async function countOneStatement<T>(server: TestServer, fn: () => Promise<T>): Promise<{ result: T; booked: number }> {
  const prisma = server.app.db.prisma as unknown as { $queryRaw: (...args: unknown[]) => Promise<unknown[]> };
  const original = prisma.$queryRaw;
  let booked = 0;
  prisma.$queryRaw = function (this: unknown, ...args: unknown[]) {
    const oneStatement = Array.isArray(args[0]) && (args[0] as string[]).join('').includes('WITH RECURSIVE locked AS');
    const rows = original.apply(this, args);
    return oneStatement ? Promise.resolve(rows).then((r) => ((booked += r.length ? 1 : 0), r)) : rows;
  };
  try {
    return { result: await fn(), booked };
  } finally {
    prisma.$queryRaw = original;
  }
}

async function filledInvoice(server: TestServer, m: TestMerchant): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }], orderId: 'o-1', metadata: { k: 'v' } } });
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
  const db = server.app.db.prisma;
  const name = (s: string) => (s === id ? 'INVOICE' : transfers.includes(s) ? `T${transfers.indexOf(s)}` : s);
  const rows = await db.chainTransfer.findMany({ where: { invoiceId: id }, orderBy: { seenAt: 'asc' } });
  const hashes = rows.map((r) => r.txHash);
  const anon = (v: unknown): unknown => (typeof v === 'string' ? (hashes.includes(v) ? `H${hashes.indexOf(v)}` : name(v)) : v);
  const invoice = await db.invoice.findUniqueOrThrow({ where: { id } });
  const entries = await db.ledgerEntry.findMany({ where: { invoiceId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const events = await db.event.findMany({ where: { subjectId: id }, orderBy: { seq: 'asc' } });
  const deliveries = await db.webhookDelivery.count({ where: { event: { subjectId: id } } });
  return {
    booked,
    written: {
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
    },
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
});
