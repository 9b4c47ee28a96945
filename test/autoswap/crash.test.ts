// Autoswaps across kill -9: a swap held (and one already at the venue) before the crash fills exactly once after the
// restart: one venue order per swap, one target leg, one autoswap.done webhook each.
import { describe, expect, it } from 'vitest';
import { PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { toMoney } from '../../src/domain/money.ts';
import { autoswapStatusCheck } from '../../src/autoswap/ledger-checks.ts';
import { verifyLedger } from '../../src/features.ts';
import { crashHarness } from '../support/crash-harness.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';

describe.each(DATABASES)('autoswap across kill -9 on %s', { timeout: 180_000 }, (kind) => {
  const h = crashHarness(kind, {
    merchant: 'Crash Autoswap',
    webhooks: true,
    env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', AUTOSWAP_INTERVAL_MS: '100', AUTOSWAP_RETRY_MS: '100', AUTOSWAP_MAX_ATTEMPTS: '50', AUTOSWAP_LEASE_MS: '3000' },
  });
  const api = (method: string, p: string, json?: unknown) => h.api(method, p, json);

  /** A btc invoice of `amount` paid (plus its fee) and confirmed on the sandbox chain; answers its id. */
  const pay = async (amount: string) => {
    const created = await api('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Swap me', price: 1 }] });
    const filled = await h.api('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { clientEmail: 'payer@example.com', paymentCurrency: 'btc' }, null);
    const total = toMoney(amount).plus(filled.body.paymentDetails.invoiceFee).toFixed();
    const paid = await api('POST', '/api/sandbox/transfers', { invoiceId: created.body.id, amount: total, confirmations: PAYMENT_CURRENCY_INFO.btc.confirmations });
    expect(paid.status, paid.text).toBe(201);
    return created.body.id as string;
  };
  const swapOf = async (invoiceId: string) =>
    ((await h.api('GET', `/api/invoices/v1/regular/${invoiceId}`, undefined, null)).body.invoiceTransactions ?? []).find((t: { kind: string }) => t.kind === 'autoswap');

  it('one swap at the venue and one only held: kill -9, restart, each fills once', async () => {
    expect((await api('PATCH', '/api/company/autoswap', { assets: { btc: { isEnabled: true, toCurrency: 'trc20usdt' } } })).status).toBe(200);
    // The venue takes the first order and keeps it pending.
    expect((await api('PUT', '/api/sandbox/autoswap-venue', { behaviour: 'hold' })).status).toBe(200);
    const atVenue = await pay('0.01');
    await eventually(() => swapOf(atVenue), (s) => s?.status === 'submitted', 30_000);
    // The venue is down for the second: it is held, queued, never taken.
    expect((await api('PUT', '/api/sandbox/autoswap-venue', { behaviour: 'down' })).status).toBe(200);
    const held = await pay('0.02');
    await eventually(() => swapOf(held), (s) => s?.status === 'queued', 30_000);

    await h.kill9();
    await h.start();
    // A swap the killed process held a lease on is taken over once AUTOSWAP_LEASE_MS passed.
    expect((await api('PUT', '/api/sandbox/autoswap-venue', { behaviour: 'fill' })).status).toBe(200);
    const first = await eventually(() => swapOf(atVenue), (s) => s?.status === 'done', 30_000);
    const second = await eventually(() => swapOf(held), (s) => s?.status === 'done', 30_000);
    expect([first.toAmount, second.toAmount]).toEqual(['950', '1900']);
    const balances = (await api('GET', '/api/company/balances')).body.balances as { asset: string; available: string; held: string }[];
    expect(balances.find((b) => b.asset === 'btc')).toMatchObject({ available: '0', held: '0' });
    expect(balances.find((b) => b.asset === 'trc20usdt')).toMatchObject({ available: '2850', held: '0' });
    const doneHooks = () => h.receiver.received.filter((r) => r.json['type'] === 'autoswap' && r.json['status'] === 'done');
    await h.receiver.waitFor(() => doneHooks().length >= 2, 30_000);

    await h.kill9();
    await h.withDb(async (db) => {
      const swaps = await db.autoSwap.findMany({ where: { companyId: h.merchant.companyId } });
      expect(swaps.map((s) => s.status).sort()).toEqual(['done', 'done']);
      for (const s of swaps) {
        expect(await db.sandboxSwapOrder.count({ where: { swapId: s.id } })).toBe(1);
        expect(await db.ledgerEntry.count({ where: { subjectId: s.id, kind: 'autoswap', account: 'merchant_available' } })).toBe(1);
        expect((await db.event.findMany({ where: { subjectId: s.id }, orderBy: { seq: 'asc' } })).map((e) => e.type)).toEqual(['autoswap.queued', 'autoswap.done']);
      }
      // The autoswap checks are registered (importing them), and pass.
      expect(await autoswapStatusCheck.problems(db)).toEqual([]);
      expect((await verifyLedger(db)).problems).toEqual([]);
    });
    expect(new Set(doneHooks().map((r) => r.headers['webhook-id'])).size).toBe(2);
  });
});
