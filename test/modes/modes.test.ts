// Test and live mode, end to end (docs/modes.md): one merchant account with a live and a test token, ethereum on a
// real node (anvil). A live invoice gets an address derived from the xpub and is paid on chain; the same flow in test
// mode runs on the sandbox chain; the test clock moved by days leaves the live invoice pending; each mode's lists,
// balances, exports, events and webhooks hold only its own objects; neither token finds the other mode's objects.
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toMoney } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

const CONFIRMATIONS = 3;
const CHAIN_WAIT_MS = 30_000;
const DAYS_3 = 3 * 24 * 60;

type Mode = 'test' | 'live';

function side(server: TestServer, token: string) {
  const call = (method: string, path: string, json?: unknown) => server.request(method, path, { token, json });
  return {
    call,
    async invoice(paymentCurrency: string, price: string) {
      const created = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency: paymentCurrency === 'eth' ? 'eth' : 'usd', items: [{ name: 'Order', price }] });
      expect(created.status, created.text).toBe(201);
      const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });
      expect(filled.status, filled.text).toBe(200);
      return { id: created.body.id as string, address: filled.body.address.address as Address, amount: filled.body.paymentDetails.amount as string };
    },
    read: async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body,
    balances: async () => (await call('GET', '/api/company/balances')).body.balances as { asset: string; available: string }[],
    invoiceIds: async () => {
      const res = await server.graphql('{ invoices(first: 100) { nodes { id mode } } }', {}, token);
      expect(res.body.errors, res.text).toBeUndefined();
      return res.body.data.invoices.nodes as { id: string; mode: string }[];
    },
    eventSubjects: async () => ((await call('GET', '/api/company/events?limit=100')).body.events as { subjectId?: string; payload: { invoiceId?: string } }[]).map((e) => e.payload.invoiceId),
    ledgerCsv: async () => (await server.request('GET', `/api/company/exports/ledger.csv?from=2020-01-01T00:00:00.000Z&to=2100-01-01T00:00:00.000Z`, { token })).text,
  };
}

describe.each(DATABASES)('test and live mode of one merchant on %s', (kind) => {
  let node: Anvil | undefined;
  const receivers: Partial<Record<Mode, Receiver>> = {};
  let merchant: TestMerchant;
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' };
  beforeAll(async () => {
    node = await startAnvil();
    Object.assign(env, chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100 } }));
  });
  afterAll(async () => {
    await node?.stop();
    for (const r of Object.values(receivers)) await r.close();
  });
  const server = useServer(kind, env);
  const live = () => side(server, merchant.live.publicToken);
  const test = () => side(server, merchant.test.publicToken);
  const paid: Partial<Record<Mode, string>> = {};

  beforeAll(async () => {
    merchant = await server.liveMerchant();
    for (const mode of ['test', 'live'] as const) {
      receivers[mode] = await startReceiver(() => merchant[mode].secretKey);
      const set = await server.request('PUT', '/api/company/settings/webhook-url', { token: merchant[mode].publicToken, json: { webHookUrl: receivers[mode]!.url } });
      expect(set.status, set.text).toBe(200);
      expect(set.headers.get('payrail-mode')).toBe(mode);
    }
  });

  it('a live ETH invoice gets an address derived from the xpub and is paid on anvil; the same flow in test mode runs on the sandbox chain', async () => {
    const liveInvoice = await live().invoice('eth', '1');
    // Derived from the node's xpub (a DerivedAddress of ethereum), watched by the node's scanner.
    expect(await server.app.db.prisma.derivedAddress.count({ where: { network: 'ethereum', address: liveInvoice.address } })).toBe(1);
    expect((await server.request('GET', `/api/invoices/v1/regular/${liveInvoice.id}`)).headers.get('payrail-mode')).toBe('live');
    const simulated = await server.request('POST', '/api/sandbox/transfers', { token: merchant.live.publicToken, json: { invoiceId: liveInvoice.id, amount: liveInvoice.amount, confirmations: 12 } });
    expect(simulated.status).toBe(403);
    await node!.pay(liveInvoice.address, liveInvoice.amount);
    await node!.mine(CONFIRMATIONS);
    const done = await eventually(() => live().read(liveInvoice.id), (b) => b.status === 'done', CHAIN_WAIT_MS);
    expect(done).toMatchObject({ mode: 'live', invoiceTransactions: [expect.objectContaining({ amount: liveInvoice.amount, status: 'confirmed' })] });
    paid.live = liveInvoice.id;

    const testInvoice = await test().invoice('eth', '1');
    expect(await server.app.db.prisma.derivedAddress.count({ where: { address: testInvoice.address } })).toBe(0);
    const transfer = await server.request('POST', '/api/sandbox/transfers', { token: merchant.test.publicToken, json: { invoiceId: testInvoice.id, amount: testInvoice.amount, confirmations: 12 } });
    expect(transfer.status, transfer.text).toBe(201);
    expect(await test().read(testInvoice.id)).toMatchObject({ status: 'done', mode: 'test' });
    paid.test = testInvoice.id;

    // Each side's money, and only its own: 1 eth each (1.01 paid, a 0.01 fee).
    expect(await live().balances()).toEqual([expect.objectContaining({ asset: 'eth', available: '1' })]);
    expect(await test().balances()).toEqual([expect.objectContaining({ asset: 'eth', available: '1' })]);
    const byMode = await server.app.db.prisma.chainTransfer.groupBy({ by: ['mode'], _count: true });
    expect(Object.fromEntries(byMode.map((g) => [g.mode, g._count]))).toEqual({ live: 1, test: 1 });
  });

  it("the test clock moved by days closes test invoices only: the live one stays pending", async () => {
    const liveOpen = await live().invoice('eth', '0.5');
    const testOpen = await test().invoice('eth', '0.5');
    const advanced = await server.request('POST', '/api/sandbox/clock/advance', { token: merchant.test.publicToken, json: { minutes: DAYS_3 } });
    expect(advanced.status, advanced.text).toBe(200);
    expect((await server.request('POST', '/api/sandbox/clock/advance', { token: merchant.live.publicToken, json: { minutes: DAYS_3 } })).status).toBe(403);
    expect((await test().read(testOpen.id)).status).toBe('closed');
    // The expiry sweep runs for everyone meanwhile: the live invoice is on real time.
    await server.app.jobs.get('expiry-sweeper').runOnce();
    expect((await live().read(liveOpen.id)).status).toBe('pending');
    const tenants = await server.app.db.prisma.company.findMany({ where: { accountId: merchant.companyId } });
    const clocks = await server.app.db.prisma.sandboxClock.findMany({ where: { companyId: { in: tenants.map((t) => t.id) } } });
    expect(clocks.map((c) => c.companyId)).toEqual([tenants.find((t) => t.mode === 'test')!.id]);
  });

  it("each mode's lists, events, exports and webhooks hold its own objects only; neither token finds the other mode's", async () => {
    const liveIds = (await live().invoiceIds()).map((i) => i.id);
    const testIds = (await test().invoiceIds()).map((i) => i.id);
    expect(liveIds).toContain(paid.live);
    expect(testIds).toContain(paid.test);
    expect(liveIds.filter((id) => testIds.includes(id))).toEqual([]);
    expect((await live().invoiceIds()).every((i) => i.mode === 'LIVE')).toBe(true);
    expect((await test().invoiceIds()).every((i) => i.mode === 'TEST')).toBe(true);

    expect(await live().eventSubjects()).toContain(paid.live);
    expect(await live().eventSubjects()).not.toContain(paid.test);
    expect(await test().eventSubjects()).not.toContain(paid.live);

    const liveCsv = await live().ledgerCsv();
    const testCsv = await test().ledgerCsv();
    expect(liveCsv).toContain(paid.live);
    expect(liveCsv).not.toContain(paid.test);
    expect(testCsv).toContain(paid.test);
    expect(testCsv).not.toContain(paid.live);

    // Webhooks: each mode's to its own URL, signed with its own secret key, with Payrail-Mode; nothing crosses over.
    for (const mode of ['test', 'live'] as const) {
      await receivers[mode]!.waitFor((r) => r.some((x) => x.json['invoiceId'] === paid[mode] && x.json['status'] === 'done'), 20_000);
      const other = mode === 'test' ? paid.live : paid.test;
      for (const r of receivers[mode]!.received) {
        expect(r.headers['payrail-mode']).toBe(mode);
        expect(r.specSignatureValid).toBe(true);
        expect(r.json['invoiceId']).not.toBe(other);
      }
    }

    // By id, each token finds only its own mode's objects (404 like another merchant's); no token reads the public invoice.
    for (const [token, foreign] of [
      [merchant.live.publicToken, paid.test!],
      [merchant.test.publicToken, paid.live!],
    ] as const) {
      expect((await server.request('GET', `/api/invoices/v1/regular/${foreign}`, { token })).status).toBe(404);
      expect((await server.request('POST', `/api/invoices/v1/regular/${foreign}/accept`, { token })).status).toBe(404);
      const viaGraphql = await server.graphql('query($id: ID!) { invoice(id: $id) { id } }', { id: foreign }, token);
      expect(viaGraphql.body.data.invoice).toBeNull();
    }
    expect((await server.request('GET', `/api/invoices/v1/regular/${paid.live}`)).body.mode).toBe('live');
    expect((await server.request('GET', `/api/invoices/v1/regular/${paid.test}`)).body.mode).toBe('test');
    const viewer = async (token: string) => (await server.graphql('{ viewer { mode } }', {}, token)).body.data.viewer.mode;
    expect(await viewer(merchant.live.publicToken)).toBe('LIVE');
    expect(await viewer(merchant.test.publicToken)).toBe('TEST');
  });

  it('by construction: what the simulated chain reports never reaches a live object, and a live company has no test clock', async () => {
    const liveOpen = await live().invoice('eth', '0.25');
    const chains = server.app.platform.chains;
    // The sandbox chain's own entry (what the sandbox routes call), aimed straight at the live address.
    await expect(
      chains.report({ network: 'ethereum', asset: 'eth', txHash: `0x${'ab'.repeat(32)}`, outputIndex: 0, from: null, to: liveOpen.address, tag: null, amount: toMoney(liveOpen.amount), confirmations: 12, blockNumber: null, dropped: false }),
    ).rejects.toThrow(/No payment address/);
    expect(await server.app.db.prisma.chainTransfer.count({ where: { invoiceId: liveOpen.id } })).toBe(0);
    expect((await live().read(liveOpen.id)).status).toBe('pending');

    // A live withdrawal (the hot wallet holds nothing, so it waits to be sent): a simulated outcome for it changes nothing.
    const withdraw = await live().call('POST', '/api/transactions/withdraw', { items: [{ amount: '0.1', tag: '', to: node!.payers[2]!.address, asset: 'eth' }] });
    expect(withdraw.body[0], withdraw.text).toMatchObject({ success: true });
    const uid = withdraw.body[0].uid as string;
    expect(await chains.reportOutgoing({ network: 'ethereum', purpose: 'withdrawal', id: uid, txHash: `0x${'cd'.repeat(32)}`, outcome: 'confirmed' })).toBeNull();
    expect((await live().call('GET', `/api/transactions/withdrawals/${uid}`)).body.status).toBe('processing');

    const liveTenant = await server.app.db.prisma.company.findUniqueOrThrow({ where: { accountId_mode: { accountId: merchant.companyId, mode: 'live' } } });
    await expect(server.app.platform.clock.advance(liveTenant.id, 60)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await server.app.db.prisma.sandboxClock.count({ where: { companyId: liveTenant.id } })).toBe(0);
  });

  it('live mode offers only the networks with a node; ledger:verify checks each mode on its own', async () => {
    const created = await live().call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 10 }] });
    expect(created.body.company.assets).toContainEqual({ asset: 'btc', isAllowed: false });
    expect(created.body.company.assets).toContainEqual({ asset: 'eth', isAllowed: true });
    const btc = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'btc' } });
    expect(btc.status).toBe(422);
    expect(btc.body.error.details).toEqual([{ path: 'paymentCurrency', message: 'btc is not offered in live mode: no node runs bitcoin on this service (CHAINS_FILE)' }]);
    const testCreated = await test().call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 10 }] });
    expect(testCreated.body.company.assets).toContainEqual({ asset: 'btc', isAllowed: true });

    const db = server.app.db.prisma;
    const clean = await verifyLedger(db);
    expect(clean.ok, JSON.stringify(clean.problems)).toBe(true);
    expect(clean.modes.live!.journals).toBeGreaterThan(0);
    expect(clean.modes.test!.journals).toBeGreaterThan(0);
    // A test-mode balance off by one unit: test mode fails, live mode still holds.
    const testTenant = await db.company.findUniqueOrThrow({ where: { accountId_mode: { accountId: merchant.companyId, mode: 'test' } } });
    await db.$executeRaw`UPDATE "Balance" SET "amount" = "amount" + 0.000001 WHERE "companyId" = ${testTenant.id}::uuid AND "asset" = 'eth' AND "account" = 'merchant_available' AND "shard" = (SELECT MIN("shard") FROM "Balance" WHERE "companyId" = ${testTenant.id}::uuid AND "asset" = 'eth' AND "account" = 'merchant_available')`;
    try {
      const both = await verifyLedger(db);
      expect(both.ok).toBe(false);
      expect(both.problems.map((p) => [p.check, p.mode])).toEqual([['running-balance', 'test']]);
      expect(both.modes).toMatchObject({ test: { ok: false, problems: 1 }, live: { ok: true, problems: 0 } });
      expect((await verifyLedger(db, [], { mode: 'live' })).ok).toBe(true);
      expect((await verifyLedger(db, [], { mode: 'test' })).ok).toBe(false);
    } finally {
      await db.$executeRaw`UPDATE "Balance" SET "amount" = "amount" - 0.000001 WHERE "companyId" = ${testTenant.id}::uuid AND "asset" = 'eth' AND "account" = 'merchant_available' AND "shard" = (SELECT MIN("shard") FROM "Balance" WHERE "companyId" = ${testTenant.id}::uuid AND "asset" = 'eth' AND "account" = 'merchant_available')`;
    }
  });
});
