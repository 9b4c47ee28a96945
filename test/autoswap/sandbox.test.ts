// Autoswap in test mode, black-box through the real server: rules, the sandbox venue, ledger, webhooks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../generated/prisma/client.ts';
import { verifyLedger } from '../../src/features.ts';
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

/** An SSE subscription read with fetch: the data of each event as it arrives. */
function sse(server: TestServer, query: string, token: string) {
  const values: Record<string, unknown>[] = [];
  const controller = new AbortController();
  void fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  })
    .then(async (res) => {
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString('utf8');
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const data = buffer.slice(0, cut).split('\n').find((l) => l.startsWith('data:'))?.slice(5).trim();
          buffer = buffer.slice(cut + 2);
          const parsed = data ? (JSON.parse(data) as { data?: Record<string, unknown> }) : null;
          if (parsed?.data) values.push(parsed.data);
        }
      }
    })
    .catch(() => {});
  return { values, stop: () => controller.abort() };
}

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

    // From the first cursor: every change of this merchant's swaps, then live ones (no race with the registration).
    const live = sse(server, 'subscription { autoswapEvents(after: "0.0") { id status from to toAmount } }', m.publicToken);
    const invoiceId = await payInvoice(server, m, 'btc', '0.01');
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s.length === 1 && s[0]!.status === 'done');
    await eventually(async () => live.values, (v) => v.length > 0);
    live.stop();
    expect(live.values).toEqual([{ autoswapEvents: { id: swap!.id, status: 'DONE', from: 'BTC', to: 'TRC20USDT', toAmount: '942.41425' } }]);
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

  it('fails a fill beyond maxSlippagePercent: btc released, autoswap.failed webhook, the invoice still done', async () => {
    const m = await server.merchant();
    await withWebhooks(m);
    expect((await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: '1' } })).status).toBe(200);
    await setVenue(server, m, { slippagePercent: '1.5' });
    const invoiceId = await payInvoice(server, m, 'btc', '0.02');
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s.length === 1 && s[0]!.status === 'failed');
    expect(swap!.failReason).toBe('The venue would deliver 1871.5 trc20usdt, below the minimum output of 1881 trc20usdt (slippage beyond maxSlippagePercent)');
    expect(await balanceOf(server, m.publicToken, 'btc')).toEqual({ available: '0.02', held: '0' });
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '0', held: '0' });
    const invoice = await invoiceOf(server, invoiceId);
    expect(invoice.body.status).toBe('done');
    expect(invoice.body.invoiceTransactions[1]).toMatchObject({ kind: 'autoswap', status: 'failed', toAmount: null, rate: '95000', txHash: null, reason: swap!.failReason });
    await receiver.waitFor((r) => r.some((x) => x.json['id'] === swap!.id));
    const hook = receiver.received.find((x) => x.json['id'] === swap!.id)!;
    expect(hook.specSignatureValid).toBe(true);
    expect(hook.json).toMatchObject({ type: 'autoswap', kind: 'autoswap', status: 'failed', from: 'btc', amount: '0.02', to: 'trc20usdt' });
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: swap!.id }, orderBy: { seq: 'asc' } });
    // The queued swap's internal event woke the driver; the failure is the news.
    expect(events.map((e) => e.type)).toEqual(['autoswap.queued', 'autoswap.failed']);
    // The events feed lists it.
    const feed = await server.request('GET', '/api/company/events?limit=100', { token: m.publicToken });
    expect(JSON.stringify(feed.body)).toContain('autoswap.failed');
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('holds the amount while the venue has the order (held, not available), then books both legs once filled', async () => {
    const m = await server.merchant();
    await setRules(server, m, { eth: { isEnabled: true, toCurrency: 'usdc' } });
    await setVenue(server, m, { behaviour: 'hold' });
    await payInvoice(server, m, 'eth', '0.5');
    await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'submitted');
    expect(await balanceOf(server, m.publicToken, 'eth')).toEqual({ available: '0', held: '0.5' });
    // Nothing to withdraw meanwhile: the held eth is not available.
    const w = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '0.1', tag: '', to: '0x52908400098527886E0F7030069857D2E4169EE7', asset: 'eth' }] } });
    expect(w.body[0].success).toBe(false);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
    await setVenue(server, m, { behaviour: 'fill' });
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'done');
    expect(swap!.toAmount!.toString()).toBe('1750');
    expect(await balanceOf(server, m.publicToken, 'eth')).toEqual({ available: '0', held: '0' });
    expect(await balanceOf(server, m.publicToken, 'usdc')).toEqual({ available: '1750', held: '0' });
    expect(await server.app.db.prisma.sandboxSwapOrder.count({ where: { swapId: swap!.id } })).toBe(1);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('retries a venue that is down with backoff, then fails the swap with the reason and releases it', async () => {
    const m = await server.merchant();
    await setRules(server, m, { ltc: { isEnabled: true, toCurrency: 'btc' } });
    await setVenue(server, m, { behaviour: 'down' });
    await payInvoice(server, m, 'ltc', '1');
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'failed');
    expect(swap!.attempts).toBe(2);
    expect(swap!.failReason).toBe('The sandbox venue is down (sandbox setting) (gave up after 3 attempts)');
    expect(await balanceOf(server, m.publicToken, 'ltc')).toEqual({ available: '1', held: '0' });
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('validates rules: 422 naming each problem, all or nothing; scope payouts:write; audit-logged', async () => {
    const m = await server.merchant();
    // The shape first: the slippage cap's bounds and places.
    const shape = await setRules(server, m, {
      bnb: { isEnabled: true, toCurrency: 'btc', maxSlippagePercent: '0' },
      ltc: { isEnabled: true, toCurrency: 'btc', maxSlippagePercent: '10.5' },
      trx: { isEnabled: true, toCurrency: 'btc', maxSlippagePercent: '1.234' },
      eth: { isEnabled: 'yes', toCurrency: 'btc' },
    });
    expect(shape.status).toBe(422);
    expect(shape.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(
      ['assets.bnb.maxSlippagePercent', 'assets.eth.isEnabled', 'assets.ltc.maxSlippagePercent', 'assets.trx.maxSlippagePercent'].sort(),
    );
    // Then the meaning: known currencies, not itself, a target when enabled.
    const bad = await setRules(server, m, {
      btc: { isEnabled: true, toCurrency: 'trc20usdt' },
      doge: { isEnabled: true, toCurrency: 'btc' },
      eth: { isEnabled: true, toCurrency: 'eth' },
      sol: { isEnabled: true, toCurrency: null },
      ton: { isEnabled: false, toCurrency: 'xyz' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([
      { path: 'assets.doge', message: 'is not a payment currency; use one of: btc, eth, trc20usdt, usdterc20, sol, ton, usdc, bnb, ltc, trx, bch' },
      { path: 'assets.eth.toCurrency', message: 'cannot be eth itself' },
      { path: 'assets.sol.toCurrency', message: 'is required when enabled' },
      { path: 'assets.ton.toCurrency', message: 'is not a payment currency; use one of: btc, eth, trc20usdt, usdterc20, sol, ton, usdc, bnb, ltc, trx, bch' },
    ]);
    // Nothing changed, btc's valid rule included.
    expect((await server.request('GET', '/api/company/autoswap', { token: m.publicToken })).body.autoswaps[0].isEnabled).toBe(false);
    expect((await setRules(server, m, {})).status).toBe(422);
    // A key that may only read payouts reads the rules and cannot change them.
    const key = await server.request('POST', '/api/company/api-keys', { token: m.publicToken, json: { name: 'reader', scopes: ['payouts:read'] } });
    expect(key.status, key.text).toBe(201);
    expect((await server.request('GET', '/api/company/autoswap', { token: key.body.token })).status).toBe(200);
    const refused = await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt' } }, key.body.token);
    expect([refused.status, refused.body.error.message]).toEqual([403, 'This API key lacks the scope payouts:write']);
    expect((await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: 2.5 } })).status).toBe(200);
    const audit = await server.app.db.prisma.auditEntry.findMany({ where: { companyId: m.companyId, action: 'autoswaps.changed' } });
    expect(audit.map((a) => a.details)).toEqual([{ rules: [{ asset: 'btc', isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: '2.5' }] }]);
  });

  it('keeps the modes apart: live mode has no route without SWAP_CONFIG, and sees none of test mode’s rules', async () => {
    const m = await server.merchant();
    expect((await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt' } })).status).toBe(200);
    const live = await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt' } }, m.live.publicToken);
    expect(live.status).toBe(422);
    expect(live.body.error.details).toEqual([{ path: 'assets.btc.toCurrency', message: 'no venue swaps btc to trc20usdt in live mode (docs/autoswap.md, "Venues")' }]);
    // A disabled rule needs no route.
    expect((await setRules(server, m, { btc: { isEnabled: false, toCurrency: 'trc20usdt' } }, m.live.publicToken)).status).toBe(200);
    const liveRules = (await server.request('GET', '/api/company/autoswap', { token: m.live.publicToken })).body.autoswaps;
    expect(liveRules[0]).toEqual({ asset: 'btc', isEnabled: false, toCurrency: 'trc20usdt', maxSlippagePercent: '1' });
    expect((await server.request('GET', '/api/company/autoswap', { token: m.publicToken })).body.autoswaps[0].isEnabled).toBe(true);
    // The sandbox venue's controls are test mode's.
    expect((await server.request('PUT', '/api/sandbox/autoswap-venue', { token: m.live.publicToken, json: { behaviour: 'hold' } })).status).toBe(403);
  });

  it('fires the auto-withdrawal of the target currency on the swapped amount', async () => {
    const m = await server.merchant();
    await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt' } });
    const rule = await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: m.publicToken,
      json: { assets: { trc20usdt: { amount: 40, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } } },
    });
    expect(rule.status, rule.text).toBe(200);
    await payInvoice(server, m, 'btc', '0.001');
    await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'done');
    const withdrawals = await eventually(() => server.app.db.prisma.withdrawal.findMany({ where: { companyId: m.companyId } }), (w) => w.length === 1);
    // 0.001 btc -> 95 usdt; the auto-withdrawal sends it less its 1 usdt fee.
    expect(withdrawals.map((w) => [w.origin, w.asset, w.amount.toString(), w.toAddress])).toEqual([['auto', 'trc20usdt', '94', TRON]]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '0', held: '95' });
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('leaves a short payment alone while it may be refunded, and swaps it once the merchant accepts it', async () => {
    const m = await server.merchant();
    await setRules(server, m, { btc: { isEnabled: true, toCurrency: 'trc20usdt' } });
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Short', price: 950 }] } });
    const id = created.body.id as string;
    const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: 'btc' } });
    const half = new Prisma.Decimal(filled.body.paymentDetails.amount).div(2).toFixed();
    // Half of it: wrong (short), the money credited but the merchant may still refund it.
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: half, confirmations: 2 } });
    expect((await invoiceOf(server, id)).body.status).toBe('wrong');
    await server.app.jobs.get('autoswap-driver').runOnce();
    expect(await swapsOf(server, m.companyId)).toEqual([]);
    expect(await balanceOf(server, m.publicToken, 'btc')).toEqual({ available: half, held: '0' });
    expect((await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token: m.publicToken })).body.status).toBe('done');
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'done');
    // What arrived less the fee the accept charged.
    const fee = (await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id } })).feeCharged!;
    expect(swap!.amount.toString()).toBe(new Prisma.Decimal(half).minus(fee).toString());
    expect(await balanceOf(server, m.publicToken, 'btc')).toEqual({ available: '0', held: '0' });
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('swaps a deposit to a static address, listed with the deposit', async () => {
    const m = await server.merchant();
    await setRules(server, m, { ltc: { isEnabled: true, toCurrency: 'usdterc20' } });
    const address = (await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'ltc', internalUserId: 'swap-user' } })).body;
    const seen = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: '2' } });
    expect(seen.status, seen.text).toBe(201);
    expect((await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: {} })).status).toBe(200);
    const [swap] = await eventually(() => swapsOf(server, m.companyId), (s) => s[0]?.status === 'done');
    expect(swap!.transferId).toBe(seen.body.id);
    expect(swap!.addressId).toBe(address.id);
    const deposits = await server.request('GET', '/api/deposits', { token: m.publicToken });
    const deposit = deposits.body.deposits.find((d: { id: string }) => d.id === seen.body.id);
    expect(deposit.autoswaps).toEqual([expect.objectContaining({ id: swap!.id, kind: 'autoswap', from: 'ltc', to: 'usdterc20', status: 'done', invoiceId: null, addressId: address.id })]);
    expect(await balanceOf(server, m.publicToken, 'ltc')).toEqual({ available: '0', held: '0' });
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });
});
