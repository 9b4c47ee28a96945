// Concurrency: many withdraw calls against one balance, and many credits against one auto-withdrawal threshold.
import { describe, expect, it } from 'vitest';
import { PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { Money, toMoney } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { checkApiExchange } from '../support/contract.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, fund } from '../support/funding.ts';
import { useServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

describe.each(DATABASES)('withdrawal races on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('500 concurrent withdraw calls: the accepted ones fit the balance to the last unit, none overdraws', async () => {
    const m = await server.merchant();
    expect(await fund(server, m.publicToken, 'trc20usdt', '1000')).toBe('1000');
    // Amounts from 5 to about 25 with 6 decimals, so that no two totals are alike.
    const amounts = Array.from({ length: 500 }, (_, i) => new Money(5).plus(new Money(i * 40_009).div(1_000_000)).toFixed());
    // All sent at once (the embedded database serves them one at a time: a longer timeout than server.request's).
    const results = await Promise.all(
      amounts.map(async (amount) => {
        const res = await fetch(`${server.url}/api/transactions/withdraw`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.publicToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ amount, tag: '', to: TRON, asset: 'trc20usdt' }] }),
          signal: AbortSignal.timeout(100_000),
        });
        const text = await res.text();
        checkApiExchange({ method: 'POST', path: '/api/transactions/withdraw', status: res.status, contentType: res.headers.get('content-type'), text });
        return { status: res.status, body: JSON.parse(text) as { success: boolean; uid: string; message: string }[] };
      }),
    );
    expect(results.map((r) => r.status).every((s) => s === 200)).toBe(true);
    const fee = toMoney(PAYMENT_CURRENCY_INFO.trc20usdt.withdrawalFee);
    const accepted = amounts.filter((_, i) => results[i]!.body[0]!.success);
    const refused = amounts.filter((_, i) => !results[i]!.body[0]!.success);
    for (const r of results.filter((r) => !r.body[0]!.success)) expect(r.body[0]!.message).toMatch(/^Insufficient balance: /);
    const spent = accepted.reduce((sum, a) => sum.plus(a).plus(fee), new Money(0));
    const left = new Money(1000).minus(spent);
    expect(accepted.length).toBeGreaterThan(30);
    expect(refused.length).toBeGreaterThan(0);
    expect(left.isNegative()).toBe(false);
    // The balance never grew during the race, so every refused item was refused against at least what is left:
    // none of them would fit it now.
    for (const a of refused) expect(toMoney(a).plus(fee).gt(left)).toBe(true);
    const balance = await balanceOf(server, m.publicToken, 'trc20usdt');
    expect(balance.available).toBe(left.toFixed());
    expect(toMoney(balance.held).lte(spent)).toBe(true);
    expect(await server.app.db.prisma.withdrawal.count({ where: { companyId: m.companyId } })).toBe(accepted.length);
    const uids = new Set(results.flatMap((r) => (r.body[0]!.success ? [r.body[0]!.uid] : [])));
    expect(uids.size).toBe(accepted.length);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('20 concurrent credits that cross the auto-withdrawal threshold once create exactly one auto-withdrawal', async () => {
    const m = await server.merchant();
    const patched = await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: m.publicToken,
      json: { assets: { trc20usdt: { amount: 60, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } } },
    });
    expect(patched.status).toBe(200);
    // 20 invoices, each paid 5 (plus its fee) and seen on chain; then all confirmed at once.
    const transfers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
        const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
        const amount = new Money(5).plus(filled.body.paymentDetails.invoiceFee).toFixed();
        const seen = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: created.body.id, amount } });
        expect(seen.status).toBe(201);
        return seen.body.id as string;
      }),
    );
    const confirmed = await Promise.all(transfers.map((id) => server.request('POST', `/api/sandbox/transfers/${id}/confirm`, { token: m.publicToken, json: {} })));
    expect(confirmed.map((r) => r.status)).toEqual(transfers.map(() => 200));
    // 20 x 5 = 100: the credit that reached 60 sent 59 + 1 fee; the 8 after it left 40, below the threshold.
    const auto = await server.app.db.prisma.withdrawal.findMany({ where: { companyId: m.companyId } });
    expect(auto.map((w) => [w.origin, w.amount.toString()])).toEqual([['auto', '59']]);
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).available).toBe('40');
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });
});
