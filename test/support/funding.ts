// Gives a test merchant money through the real payment path: an invoice paid and confirmed on the sandbox chain.
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../src/domain/assets.ts';
import { toMoney } from '../../src/domain/money.ts';
import { ACCOUNTS, postJournal } from '../../src/ledger/ledger.ts';
import type { TestServer } from './server.ts';

/**
 * Pays `amount` of `asset` plus the invoice's fee to a new invoice of the merchant and confirms it, so the available
 * balance grows by exactly `amount`; answers the available balance after.
 */
export async function fund(server: TestServer, token: string, asset: PaymentCurrency, amount: string): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Top-up', price: 1 }] } });
  if (created.status !== 201) throw new Error(`invoice create failed: ${created.text}`);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: asset } });
  if (filled.status !== 200) throw new Error(`proceed failed: ${filled.text}`);
  const paid = await server.request('POST', '/api/sandbox/transfers', {
    token,
    json: { invoiceId: created.body.id, amount: toMoney(amount).plus(filled.body.paymentDetails.invoiceFee).toFixed(), confirmations: PAYMENT_CURRENCY_INFO[asset].confirmations },
  });
  if (paid.status !== 201) throw new Error(`sandbox transfer failed: ${paid.text}`);
  return available(server, token, asset);
}

export async function balanceOf(server: TestServer, token: string, asset: string): Promise<{ available: string; held: string }> {
  const res = await server.request('GET', '/api/company/balances', { token });
  const row = (res.body.balances as { asset: string; available: string; held: string }[]).find((b) => b.asset === asset);
  return { available: row?.available ?? '0', held: row?.held ?? '0' };
}

export const available = async (server: TestServer, token: string, asset: string) => (await balanceOf(server, token, asset)).available;

/** Polls until `check` passes (background work such as the withdrawal sender), or fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Books `amount` of `asset` straight into a merchant's available balance (a deposit journal naming no transfer), in
 * one database transaction: how a test reaches balances near the limit that a sequence of sandbox requests would
 * need a thousand calls for.
 */
export async function bookDirectly(server: TestServer, companyId: string, asset: string, amount: string): Promise<void> {
  const value = toMoney(amount);
  await server.app.db.prisma.$transaction((tx) =>
    postJournal(tx, {
      companyId,
      asset,
      kind: 'deposit',
      postings: [
        { account: ACCOUNTS.chainExternal, amount: value.neg() },
        { account: ACCOUNTS.merchantAvailable, amount: value },
      ],
    }),
  );
}
