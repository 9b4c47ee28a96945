// Concurrency: many withdraw calls against one balance, and many credits against one auto-withdrawal threshold; the
// same race in both modes of one merchant at once, live mode on an anvil node.
import { parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { Money, toMoney } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { checkApiExchange } from '../support/contract.ts';
import { DATABASES } from '../support/databases.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { balanceOf, eventually, fund } from '../support/funding.ts';
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

// Both modes of one merchant at once, live mode on a real node (anvil): concurrent withdrawals from a live balance a
// real paid invoice funded, beside as many from the test balance on the sandbox chain. Each mode's accepted ones fit
// its own balance to the last unit; the live ones go out on the node once each and the test ones on the sandbox only.
describe.runIf(ANVIL).each(DATABASES)('withdrawal races in both modes of one merchant on %s (live mode on anvil)', { timeout: 180_000 }, (kind) => {
  const PER_MODE = 60;
  const CONFIRMATIONS = 2;
  const CHAIN_WAIT_MS = 60_000;
  let node: Anvil | undefined;
  const env: Record<string, string> = { WITHDRAWAL_SEND_INTERVAL_MS: '200' };
  beforeAll(async () => {
    node = await startAnvil();
    // No consolidation during the test: the hot wallet is funded by hand, so every transaction from it is a withdrawal.
    Object.assign(env, chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100, sweepIntervalMs: 3_600_000 } }));
  });
  afterAll(async () => node?.stop());
  const server = useServer(kind, env);

  async function withdrawalsOf(token: string): Promise<{ uid: string; status: string; txHash: string }[]> {
    const all: { uid: string; status: string; txHash: string }[] = [];
    for (let after: string | null = null; ; ) {
      const res = await server.request('GET', `/api/transactions/withdrawals?limit=100${after ? `&after=${after}` : ''}`, { token });
      expect(res.status, res.text).toBe(200);
      all.push(...res.body.withdrawals);
      after = res.body.nextCursor;
      if (!after) return all;
    }
  }

  it(`${PER_MODE} live and ${PER_MODE} test withdraw calls at once: neither balance overdrawn, none crosses modes, each live one paid on chain once`, async () => {
    const m = await server.liveMerchant();
    const live = m.live.publicToken;
    const test = m.test.publicToken;
    // Live money: an invoice of 10 eth (and its fee) paid on anvil. Test money: the same on the sandbox chain.
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: live, json: { invoiceCurrency: 'eth', items: [{ name: 'Top-up', price: '10' }] } });
    const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'eth' } });
    expect(filled.status, filled.text).toBe(200);
    await node!.pay(filled.body.address.address, filled.body.paymentDetails.amount);
    await node!.mine(CONFIRMATIONS);
    await eventually(() => server.request('GET', `/api/invoices/v1/regular/${created.body.id}`).then((r) => r.body.status), (s) => s === 'done', CHAIN_WAIT_MS);
    expect((await balanceOf(server, live, 'eth')).available).toBe('10');
    expect(await fund(server, test, 'eth', '10')).toBe('10');
    const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;
    await node!.test.setBalance({ address: hot, value: parseEther('100') });

    // One fresh receiver per call, so what each address holds afterwards says how often it was paid.
    const calls = Array.from({ length: 2 * PER_MODE }, (_, i) => ({
      mode: i % 2 === 0 ? ('live' as const) : ('test' as const),
      amount: new Money('0.2').plus(new Money(Math.floor(i / 2) * 1_237).div(1_000_000)).toFixed(),
      to: privateKeyToAccount(generatePrivateKey()).address,
    }));
    const results = await Promise.all(
      calls.map(async (c) => {
        const res = await fetch(`${server.url}/api/transactions/withdraw`, {
          method: 'POST',
          headers: { authorization: `Bearer ${c.mode === 'live' ? live : test}`, 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ amount: c.amount, tag: '', to: c.to, asset: 'eth' }] }),
          signal: AbortSignal.timeout(100_000),
        });
        const text = await res.text();
        checkApiExchange({ method: 'POST', path: '/api/transactions/withdraw', status: res.status, contentType: res.headers.get('content-type'), text });
        expect(res.status, text).toBe(200);
        expect(res.headers.get('payrail-mode')).toBe(c.mode);
        return { ...c, ...(JSON.parse(text) as { success: boolean; uid: string; message: string }[])[0]! };
      }),
    );

    const fee = toMoney(PAYMENT_CURRENCY_INFO.eth.withdrawalFee);
    const db = server.app.db.prisma;
    const accepted = { live: results.filter((r) => r.mode === 'live' && r.success), test: results.filter((r) => r.mode === 'test' && r.success) };
    for (const mode of ['live', 'test'] as const) {
      const token = mode === 'live' ? live : test;
      const mine = results.filter((r) => r.mode === mode);
      const refused = mine.filter((r) => !r.success);
      for (const r of refused) expect(r.message).toMatch(/^Insufficient balance: /);
      const spent = accepted[mode].reduce((sum, r) => sum.plus(r.amount).plus(fee), new Money(0));
      const left = new Money(10).minus(spent);
      expect(accepted[mode].length, mode).toBeGreaterThan(20);
      expect(refused.length, mode).toBeGreaterThan(0);
      expect(left.isNegative(), mode).toBe(false);
      // Each mode's balance only ever shrank during the race: no refused item would fit what is left.
      for (const r of refused) expect(toMoney(r.amount).plus(fee).gt(left), `${mode} ${r.amount}`).toBe(true);
      expect((await balanceOf(server, token, 'eth')).available, mode).toBe(left.toFixed());
      // The mode's list holds exactly its own accepted withdrawals.
      expect(new Set((await withdrawalsOf(token)).map((w) => w.uid)), mode).toEqual(new Set(accepted[mode].map((r) => r.uid)));
    }
    const tenantOf = async (uids: string[]) => new Set((await db.withdrawal.findMany({ where: { uid: { in: uids } }, select: { companyId: true } })).map((w) => w.companyId));
    expect(await tenantOf(accepted.live.map((r) => r.uid))).toEqual(new Set([m.tenantId]));
    expect(await tenantOf(accepted.test.map((r) => r.uid))).toEqual(new Set([m.companyId]));

    // The live ones go out on the node and become final; each receiver got its amount exactly once.
    const liveDone = () => withdrawalsOf(live);
    await eventually(
      async () => {
        const list = await liveDone();
        if (list.some((w) => w.status !== 'done')) await node!.mine(1);
        return list;
      },
      (list) => list.length === accepted.live.length && list.every((w) => w.status === 'done'),
      CHAIN_WAIT_MS,
    );
    for (const r of accepted.live) expect(await node!.public.getBalance({ address: r.to }), r.uid).toBe(parseEther(r.amount));
    const sends = await db.chainSend.findMany({ where: { fromAddress: hot } });
    expect(new Set(sends.map((s) => s.id))).toEqual(new Set(accepted.live.map((r) => r.uid)));
    // One transaction per withdrawal was mined from the hot wallet: its nonce counts them.
    expect(await node!.public.getTransactionCount({ address: hot })).toBe(accepted.live.length);
    // The test ones go to the sandbox chain only, and no refused call of either mode reached a chain.
    const simulated = await db.sandboxBroadcast.findMany({ where: { transferId: { in: results.map((r) => r.uid).filter(Boolean) } } });
    await eventually(() => db.sandboxBroadcast.count({ where: { transferId: { in: accepted.test.map((r) => r.uid) } } }), (n) => n === accepted.test.length, CHAIN_WAIT_MS);
    expect(simulated.every((b) => accepted.test.some((r) => r.uid === b.transferId))).toBe(true);
    for (const r of results.filter((r) => !r.success)) expect(await node!.public.getBalance({ address: r.to })).toBe(0n);

    for (const mode of ['live', 'test'] as const) {
      const report = await verifyLedger(db, server.app.platform.chains.custodySources(), { mode });
      expect(report.problems, mode).toEqual([]);
      expect(report.ok, mode).toBe(true);
    }
    console.info(`[withdrawal race both modes ${kind}] accepted ${accepted.live.length} live (all paid on anvil once) and ${accepted.test.length} test of ${PER_MODE} each`);
  });
});
