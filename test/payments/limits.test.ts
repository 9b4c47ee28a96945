// Amounts at the limits of the ledger (docs/money.md, "Limits"): the hostile review's reproductions of a Decimal(38,18)
// overflow (500 "numeric field overflow") each answer a 4xx naming the limit, and a credit past the balance limit is
// refused and recorded frozen instead of booked.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { TransferReport } from '../../src/chains/adapter.ts';
import { deliverReport } from '../../src/chains/watch.ts';
import type { Logger } from '../../src/logger.ts';
import { applyTransferReport } from '../../src/payments/processor.ts';
import { MAX_AMOUNT, MAX_BALANCE, Money } from '../../src/domain/money.ts';
import { PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, bookDirectly } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

const HUGE = '99999999999999999999.999999';
const LIMIT = MAX_AMOUNT.toFixed();
const BALANCE_LIMIT = MAX_BALANCE.toFixed();
const FINAL = PAYMENT_CURRENCY_INFO.trx.confirmations;

/** A 4xx in the one error shape whose message or details name `limit`. */
function expectRefusal(res: { status: number; text: string; body: any }, limit: string) {
  expect(res.status, res.text).toBeGreaterThanOrEqual(400);
  expect(res.status, res.text).toBeLessThan(500);
  expect(res.text, 'the answer names the limit').toContain(limit);
}

async function staticAddress(server: TestServer, token: string, asset = 'trx') {
  const res = await server.request('POST', '/api/static-addresses', { token, json: { asset, internalUserId: 'whale' } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; address: string };
}

async function invoiceIn(server: TestServer, token: string, invoiceCurrency: string, price: string, paymentCurrency = 'trx') {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency, items: [{ name: 'x', price }] } });
  expect(created.status, created.text).toBe(201);
  const proceeded = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency } });
  return { id: created.body.id as string, proceeded };
}

describe.each(DATABASES)('amount limits on %s', (kind) => {
  const server = useServer(kind);

  it(`two sandbox transfers of ${HUGE} trx to a static address: a 4xx naming the limit, nothing booked`, async () => {
    const m = await server.merchant();
    const address = await staticAddress(server, m.publicToken);
    for (let i = 0; i < 2; i++) {
      const res = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: HUGE, confirmations: FINAL } });
      expectRefusal(res, LIMIT);
      expect(res.body.error.details).toEqual([{ path: 'amount', message: `must be at most ${LIMIT}` }]);
    }
    expect(await balanceOf(server, m.publicToken, 'trx')).toEqual({ available: '0', held: '0' });
    // The largest accepted amount is booked as usual.
    const largest = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: LIMIT, confirmations: FINAL } });
    expect(largest.status, largest.text).toBe(201);
    expect(largest.body.state).toBe('confirmed');
  });

  it('a deposit that would take the balance past the limit: a 4xx naming it, recorded frozen, the balance unchanged', async () => {
    const m = await server.merchant();
    const address = await staticAddress(server, m.publicToken);
    // Just below the limit, so the next deposit of the largest amount crosses it.
    await bookDirectly(server, m.companyId, 'trx', MAX_BALANCE.minus(MAX_AMOUNT.div(2)).toFixed());
    const before = await balanceOf(server, m.publicToken, 'trx');
    const res = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: LIMIT, confirmations: FINAL } });
    expectRefusal(res, BALANCE_LIMIT);
    expect(await balanceOf(server, m.publicToken, 'trx')).toEqual(before);
    const deposits = await server.request('GET', `/api/deposits?addressId=${address.id}`, { token: m.publicToken });
    expect(deposits.body.deposits).toEqual([expect.objectContaining({ amount: LIMIT, status: 'frozen' })]);
    // Seen first and confirmed later: the confirmation is refused the same way and freezes it.
    const seen = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: LIMIT } });
    expect(seen.status, seen.text).toBe(201);
    expectRefusal(await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: {} }), BALANCE_LIMIT);
    const frozen = await server.request('GET', `/api/deposits?addressId=${address.id}&status=frozen`, { token: m.publicToken });
    expect(frozen.body.deposits.map((d: { id: string }) => d.id)).toContain(seen.body.id);
    expect(await balanceOf(server, m.publicToken, 'trx')).toEqual(before);
  });

  it('a chain watcher that reports a deposit too large to credit records it frozen, logs it and goes on (no crash loop)', async () => {
    const m = await server.merchant();
    const address = await staticAddress(server, m.publicToken);
    await bookDirectly(server, m.companyId, 'trx', MAX_BALANCE.minus(MAX_AMOUNT.div(2)).toFixed());
    // The listener the payments feature gives the chains, called as a watcher's scan calls it.
    const listener = (report: TransferReport) => applyTransferReport({ ...server.app.services.invoices, deposits: server.app.services.deposits }, report, 'test');
    const logged = vi.spyOn(server.app.logger, 'error');
    const watcherLog = { warn: vi.fn() } as unknown as Logger;
    const report: TransferReport = {
      network: 'tron', asset: 'trx', txHash: 'a'.repeat(64), outputIndex: 0, from: null, to: address.address, tag: null,
      amount: new Money('2e15'), confirmations: FINAL, blockNumber: 1n, dropped: false,
    };
    try {
      expect(await deliverReport(listener, watcherLog, report)).toBe(false);
      expect(logged.mock.calls.map((c) => c[1])).toContain('a transfer too large to credit was frozen for the operator');
    } finally {
      logged.mockRestore();
    }
    expect(watcherLog.warn).toHaveBeenCalledOnce();
    const recorded = await server.app.db.prisma.chainTransfer.findMany({ where: { addressId: address.id } });
    expect(recorded.map((t) => [t.state, t.amount.toString()])).toEqual([['frozen', '2000000000000000']]);
    // The next scan reports it again: nothing changes, nothing fails.
    expect(await deliverReport(listener, watcherLog, report)).toBe(true);
    expect((await server.app.db.prisma.chainTransfer.findMany({ where: { addressId: address.id } })).map((t) => t.state)).toEqual(['frozen']);
  });

  it('overpaying one invoice twice: amounts above the limit are refused; a paid total past the limit is refused and frozen', async () => {
    const m = await server.merchant();
    const { id, proceeded } = await invoiceIn(server, m.publicToken, 'usd', '10');
    expect(proceeded.status, proceeded.text).toBe(200);
    for (let i = 0; i < 2; i++) {
      expectRefusal(await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: HUGE, confirmations: FINAL } }), LIMIT);
    }
    const invoice = await server.request('GET', `/api/invoices/v1/regular/${id}`, { token: m.publicToken });
    expect(invoice.body.status).toBe('pending');

    // A paid total near the limit (a confirmed transfer written straight to the database, no credit): the next
    // overpayment would take it past, and is refused while the balance itself is far from its limit.
    const address = await server.app.db.prisma.paymentAddress.findUniqueOrThrow({ where: { invoiceId: id } });
    await server.app.db.prisma.chainTransfer.create({
      data: {
        id: randomUUID(), mode: 'test', network: 'tron', asset: 'trx', txHash: 'seeded0001', outputIndex: 0, toAddress: address.address,
        amount: MAX_BALANCE.minus(MAX_AMOUNT.div(2)).toFixed(), confirmations: FINAL, state: 'confirmed', role: 'payment',
        companyId: m.companyId, invoiceId: id, addressId: address.id, seenAt: new Date(), confirmedAt: new Date(),
      },
    });
    const res = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: LIMIT, confirmations: FINAL } });
    expectRefusal(res, BALANCE_LIMIT);
    expect(await balanceOf(server, m.publicToken, 'trx')).toEqual({ available: '0', held: '0' });
    const transfers = await server.app.db.prisma.chainTransfer.findMany({ where: { invoiceId: id }, orderBy: { txHash: 'asc' } });
    expect(transfers.map((t) => t.state).sort()).toEqual(['confirmed', 'frozen']);
  });

  it('invoices at the price limit: a total above the limit is refused at create, an amount to pay above it at proceed', async () => {
    const m = await server.merchant();
    const two = await server.request('POST', '/api/invoices/v1/regular', {
      token: m.publicToken,
      json: { invoiceCurrency: 'usd', items: [{ name: 'a', price: LIMIT }, { name: 'b', price: LIMIT }] },
    });
    expectRefusal(two, LIMIT);
    expect(two.body.error.details).toEqual([{ path: 'items', message: `the total of all item prices must be at most ${LIMIT}` }]);
    // 2.5e14 btc in trx (95,000 / 0.25 usd) is 9.5e19 trx: it fitted the column, and paying two of them overflowed it.
    const { proceeded } = await invoiceIn(server, m.publicToken, 'btc', '250000000000000');
    expectRefusal(proceeded, LIMIT);
    expect(proceeded.body.error.details[0].path).toBe('paymentCurrency');
    // At the limit in a currency of the same value it is payable.
    const payable = await invoiceIn(server, m.publicToken, 'usd', new Money(LIMIT).div('1.01').toDecimalPlaces(2, Money.ROUND_DOWN).toFixed(), 'trc20usdt');
    expect(payable.proceeded.status, payable.proceeded.text).toBe(200);
  });
});
