// Tron, TON and Solana against what their providers really do (issue 32), end to end: the real server on both
// databases, live-mode invoices (real nodes run only in live mode; docs/modes.md), CHAINS_FILE naming the fake APIs,
// which answer as the providers do when a backend is out of sync, fails with HTTP 200, bounces or throttles.
// ledger:verify (with its custody check against the chains) is clean after each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { Money } from '../../src/domain/money.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { FAKE_USDT_CONTRACT, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { balanceOf, eventually } from '../support/funding.ts';
import { parsePrometheus, sampleValue } from '../support/prometheus.ts';
import { useServer, type TestServer } from '../support/server.ts';

/** Base units of a decimal amount (10^-decimals), exactly. */
const units = (amount: string, decimals: number) => BigInt(new Money(amount).times(new Money(10).pow(decimals)).toFixed(0));

async function proceeded(server: TestServer, token: string, paymentCurrency: string) {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status, created.text).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency } });
  expect(filled.status, filled.text).toBe(200);
  return { id: created.body.id as string, address: filled.body.address as { address: string; tag: string | null }, amount: filled.body.paymentDetails.amount as string };
}

const invoiceOf = (server: TestServer, id: string) => server.request('GET', `/api/invoices/v1/regular/${id}`).then((r) => r.body);
const statusBecomes = (server: TestServer, id: string, status: string, timeoutMs?: number) => eventually(() => invoiceOf(server, id), (i) => i.status === status, timeoutMs);

describe.each(DATABASES)("Tron, TON and Solana against their providers' behaviours, end to end on %s", { timeout: 120_000 }, (kind) => {
  let fake: FakeChains;
  const METRICS_TOKEN = 'providers-metrics-token-of-the-test-01';
  const env: Record<string, string> = { METRICS_TOKEN };
  beforeAll(async () => {
    fake = await startFakeChains();
    // The TON deposit wallet is not deployed yet when the server starts.
    fake.ton.state = 'uninitialized';
    Object.assign(
      env,
      chainsEnv({
        // TronGrid's documented quota (100,000 a day) at a pace this test can wait for.
        tron: { apiUrl: fake.tronUrl, xpub: testXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 3, pollMs: 100, rateLimit: { perSecond: 50, burst: 10, perDay: 100_000 } },
        ton: { apiUrl: fake.tonUrl, address: fake.ton.wallet, pollMs: 100 },
        solana: { rpcUrl: fake.solanaUrl, address: fake.solana.wallet, pollMs: 100 },
      }),
    );
  });
  const server = useServer(kind, env);
  afterAll(async () => {
    await fake?.close();
  });
  const verify = async () => {
    const report = await verifyLedger(server.app.db.prisma, server.app.platform.chains.custodySources());
    expect(report.ok, JSON.stringify(report.problems)).toBe(true);
    return report;
  };

  it('tron: a block whose results the API does not have yet ([], {}, partial, an HTTP-200 error) is read again; its USDT payment is credited once', async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'trc20usdt');
    const next = fake.tron.head.number + 1;
    // Several scans in a row meet a backend behind, each in its own way; the block is not skipped.
    for (const answer of ['[]', '{}', 'partial', 'error'] as const) fake.tron.answerNext('/wallet/gettransactioninfobyblocknum', answer, { num: next, times: 2 });
    fake.tron.answerNext('/wallet/getblockbynum', '{}', { num: next, times: 2 });
    const { txIDs } = fake.tron.addBlock([{ asset: 'usdt', to: invoice.address.address, units: units(invoice.amount, 6) }]);
    await eventually(async () => fake.tron.overridesLeft, (n) => n === 0);
    await statusBecomes(server, invoice.id, 'processing');
    fake.tron.advance(2);
    const done = await statusBecomes(server, invoice.id, 'done');
    expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed', confirmations: 3 })]);
    expect(await server.app.db.prisma.chainTransfer.count({ where: { txHash: txIDs[0]! } })).toBe(1);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '100', held: '0' });
    await verify();
  });

  it("tron: java-tron's HTTP-200 error never reads as a zero balance: ledger:verify's custody check fails on it instead of reporting a shortage", async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'trc20usdt');
    fake.tron.addBlock([{ asset: 'usdt', to: invoice.address.address, units: units(invoice.amount, 6) }]);
    fake.tron.advance(2);
    await statusBecomes(server, invoice.id, 'done');
    await verify();
    for (const [path, answer] of [
      ['/walletsolidity/getaccount', 'error'],
      ['/walletsolidity/triggerconstantcontract', 'error'],
      ['/walletsolidity/triggerconstantcontract', { fixture: 'tron/triggerconstantcontract-error' }],
    ] as const) {
      fake.tron.answerNext(path, answer);
      await expect(verifyLedger(server.app.db.prisma, server.app.platform.chains.custodySources()), path).rejects.toThrow(/failed|could not read/);
      await eventually(async () => fake.tron.overridesLeft, (n) => n === 0);
    }
    await verify();
  });

  it('ton: a bounced payment is not credited and the invoice stays pending; the undeployed wallet is handed out non-bounceable, the deployed one as configured', async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'ton');
    expect(invoice.address.address).toBe(fake.ton.nonBounceableWallet);
    // The payer's wallet sends bounceable anyway: the undeployed wallet sends it back in the same transaction.
    const bounced = fake.ton.add({ amount: invoice.amount, comment: invoice.address.tag, bounceable: true });
    const reads = fake.served.get('ton /getTransactions') ?? 0;
    await eventually(async () => fake.served.get('ton /getTransactions') ?? 0, (n) => n >= reads + 3);
    const pending = await invoiceOf(server, invoice.id);
    expect(pending.status).toBe('pending');
    expect(pending.paymentDetails.paidAmount).toBe('0');
    expect(await server.app.db.prisma.chainTransfer.count({ where: { txHash: bounced } })).toBe(0);
    // Sent non-bounceable, as handed out: it stays, and settles the invoice.
    fake.ton.add({ amount: invoice.amount, comment: invoice.address.tag, bounceable: false });
    const done = await statusBecomes(server, invoice.id, 'done');
    expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed' })]);
    expect(done.paymentDetails.paidAmount).toBe(invoice.amount);

    // Deployed: the configured (bounceable) form again, and a bounceable payment stays.
    fake.ton.state = 'active';
    const states = fake.served.get('ton /getAddressInformation') ?? 0;
    await eventually(async () => fake.served.get('ton /getAddressInformation') ?? 0, (n) => n > states);
    const later = await proceeded(server, m.publicToken, 'ton');
    expect(later.address.address).toBe(fake.ton.wallet);
    fake.ton.add({ amount: later.amount, comment: later.address.tag, bounceable: true });
    await statusBecomes(server, later.id, 'done');
    await verify();
  });

  it('sol: v0 transactions whose wallet and reference come from an address lookup table are read and settle their invoices', async () => {
    const m = await server.liveMerchant();
    const [a, b] = [await proceeded(server, m.publicToken, 'sol'), await proceeded(server, m.publicToken, 'sol')];
    fake.solana.add({ amount: a.amount, references: [a.address.tag!], lookup: { references: true } });
    fake.solana.add({ amount: b.amount, references: [b.address.tag!], lookup: { wallet: true, references: true } });
    await statusBecomes(server, a.id, 'processing');
    await statusBecomes(server, b.id, 'processing');
    fake.solana.finalize();
    for (const invoice of [a, b]) {
      const done = await statusBecomes(server, invoice.id, 'done');
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed', confirmations: 32 })]);
    }
    await verify();
  });

  it('tron: a throttled provider (503, 403, 429 with Retry-After) slows the watcher down; a 60-block catch-up credits every payment once; throttling and the budget left are in the metrics', async () => {
    const m = await server.liveMerchant();
    const invoices = [];
    for (let i = 0; i < 3; i++) invoices.push(await proceeded(server, m.publicToken, 'trc20usdt'));
    // The provider throttles while 60 blocks wait (an outage's backlog), the payments among them.
    fake.throttle('tron', { times: 2, status: 503 });
    fake.throttle('tron', { times: 1, status: 403, retryAfter: 1 });
    fake.throttle('tron', { times: 1, status: 429, retryAfter: 1 });
    const since = Date.now();
    for (let block = 0; block < 60; block++) {
      const invoice = block % 20 === 5 ? invoices[(block - 5) / 20]! : null;
      fake.tron.addBlock(invoice ? [{ asset: 'usdt', to: invoice.address.address, units: units(invoice.amount, 6) }] : []);
    }
    for (const invoice of invoices) {
      const done = await statusBecomes(server, invoice.id, 'done', 60_000);
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed' })]);
    }
    // Slowed down: after each throttling answer nothing went to the provider for its Retry-After or backoff.
    const tron = fake.log.filter((l) => l.provider === 'tron' && l.at >= since);
    const throttled = tron.filter((l) => l.throttled);
    expect(throttled).toHaveLength(4);
    for (const t of throttled) {
      const next = tron.find((l) => l.at >= t.at && l !== t && tron.indexOf(l) > tron.indexOf(t));
      expect(next!.at - t.at, t.route).toBeGreaterThanOrEqual(900);
    }
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '300', held: '0' });

    const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const metrics = parsePrometheus(await scraped.text());
    for (const reason of ['503', '403', '429']) expect(sampleValue(metrics, 'payrail_chain_throttled_total', { network: 'tron', reason }), reason).toBeGreaterThanOrEqual(1);
    const sent = sampleValue(metrics, 'payrail_chain_requests_total', { network: 'tron' })!;
    // Every request the fake saw (the throttled ones too) is counted; the watcher goes on meanwhile (a burst in flight).
    const seen = fake.log.filter((l) => l.provider === 'tron').length;
    expect(sent).toBeGreaterThan(100);
    expect(Math.abs(sent - seen)).toBeLessThanOrEqual(10);
    const left = sampleValue(metrics, 'payrail_chain_budget_remaining', { network: 'tron' })!;
    expect(Math.abs(100_000 - sent - left)).toBeLessThanOrEqual(10);
    await verify();
  });
});
