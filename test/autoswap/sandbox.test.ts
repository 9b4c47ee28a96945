// Autoswap in test mode, black-box through the real server: rules, the sandbox venue, ledger, webhooks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, eventually, fund } from '../support/funding.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

const setRules = (server: TestServer, m: TestMerchant, assets: Record<string, unknown>, token = m.publicToken) =>
  server.request('PATCH', '/api/company/autoswap', { token, json: { assets } });
const setVenue = (server: TestServer, m: TestMerchant, json: Record<string, unknown>) => server.request('PUT', '/api/sandbox/autoswap-venue', { token: m.publicToken, json });
const invoiceOf = (server: TestServer, id: string) => server.request('GET', `/api/invoices/v1/regular/${id}`);
const swapsOf = (server: TestServer, companyId: string) => server.app.db.prisma.autoSwap.findMany({ where: { companyId }, orderBy: { createdAt: 'asc' } });

/** Pays a new invoice of `amount` (plus its fee) in `asset` and confirms it; answers the invoice id. */
async function payInvoice(server: TestServer, m: TestMerchant, asset: string, amount: string): Promise<string> {
  const before = (await server.app.db.prisma.invoice.findMany({ where: { companyId: m.companyId }, select: { id: true } })).map((i) => i.id);
  await fund(server, m.publicToken, asset as never, amount);
  const after = await server.app.db.prisma.invoice.findMany({ where: { companyId: m.companyId }, select: { id: true } });
  return after.map((i) => i.id).find((id) => !before.includes(id))!;
}

describe.each(DATABASES)('autoswap on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', AUTOSWAP_INTERVAL_MS: '100', AUTOSWAP_RETRY_MS: '50', AUTOSWAP_MAX_ATTEMPTS: '3' });
  let receiver: Receiver;
  const secrets = new Map<string, string>();
  beforeAll(async () => {
    receiver = await startReceiver(() => [...secrets.values()].at(-1) ?? '');
  });
  afterAll(async () => receiver?.close());

  const withWebhooks = async (m: TestMerchant) => {
    secrets.set(m.companyId, m.secretKey);
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } })).status).toBe(200);
  };

  it('answers one rule per payment currency, disabled by default', async () => {
    const m = await server.merchant();
    const res = await server.request('GET', '/api/company/autoswap', { token: m.publicToken });
    expect(res.status).toBe(200);
    expect(res.body.autoswaps).toHaveLength(11);
    expect(res.body.autoswaps[0]).toEqual({ asset: 'btc', isEnabled: false, toCurrency: null, maxSlippagePercent: '1' });
  });

  it('swaps a paid btc invoice to trc20usdt: btc unchanged, usdt up at the test rate, entry done, signed webhook, ledger clean', async () => {
    const m = await server.merchant();
    await withWebhooks(m);
    const patched = await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: '1' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.autoswaps[0]).toEqual({ asset: 'btc', isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: '1' });
    expect((await setVenue(server, m, { slippagePercent: '0.5', feePercent: '0.3' })).body).toEqual({ slippagePercent: '0.5', feePercent: '0.3', behaviour: 'fill' });

    const invoiceId = await payInvoice(server, m, 'btc', '0.01');
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s.length === 1 && s[0]!.status === 'done');
    // 0.01 btc at the test rate of 95000 usdt: 950, less 0.5 % slippage (945.25), less the venue's 0.3 % (2.835750 -> 2.835750).
    expect(swap!.amount.toString()).toBe('0.01');
    expect(swap!.toAmount!.toString()).toBe('942.41425');
    expect(swap!.venueFee!.toString()).toBe('2.83575');
    expect(await balanceOf(server, m.publicToken, 'btc')).toEqual({ available: '0', held: '0' });
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '942.41425', held: '0' });

    const invoice = await invoiceOf(server, invoiceId);
    expect(invoice.body.status).toBe('done');
    const entries = invoice.body.invoiceTransactions as Record<string, unknown>[];
    expect(entries.map((e) => e['kind'])).toEqual(['payment', 'autoswap']);
    expect(entries[1]).toEqual({
      id: swap!.id,
      kind: 'autoswap',
      from: 'btc',
      amount: '0.01',
      to: 'trc20usdt',
      toAmount: '942.41425',
      rate: '94241.425',
      status: 'done',
      txHash: `sandbox-${swap!.id}`,
      companyId: m.companyId,
      invoiceId,
      addressId: entries[0]!['addressId'],
      createdAt: swap!.createdAt.toISOString(),
      reason: null,
    });

    await receiver.waitFor((r) => r.some((x) => x.json['type'] === 'autoswap' && x.json['id'] === swap!.id));
    const hook = receiver.received.find((x) => x.json['type'] === 'autoswap' && x.json['id'] === swap!.id)!;
    expect(hook.specSignatureValid).toBe(true);
    expect(hook.json).toEqual({ type: 'autoswap', ...entries[1] });

    const gql = await server.graphql(`query($id: ID!) { invoice(id: $id) { autoswaps { id status from to amount toAmount txHash } } }`, { id: invoiceId }, m.publicToken);
    expect(gql.body.data.invoice.autoswaps).toEqual([{ id: swap!.id, status: 'DONE', from: 'BTC', to: 'TRC20USDT', amount: '0.01', toAmount: '942.41425', txHash: `sandbox-${swap!.id}` }]);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });
});
