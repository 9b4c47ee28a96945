// Money-safety edges found in review: the risk hook never rejects a withdrawal that may already be on chain, a sender
// whose claim was taken over records nothing (fenced by sendAttempts), and a withdrawal never takes the fee an
// invoice will still charge (so the invoice's last payment can always be recorded).
import { describe, expect, it } from 'vitest';
import { sandboxRegistry } from '../../src/chains/sandbox.ts';
import type { ChainAdapter, ChainRegistry } from '../../src/chains/adapter.ts';
import { allowAll, denyList } from '../../src/core/risk.ts';
import { toMoney } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { sendWithdrawalBatch } from '../../src/withdrawals/sender.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, eventually, fund } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/**
 * The server's own sender wakes once for each new withdrawal (its sends all fail here and put it back to queued);
 * the test drives its own sender only after that, so the two never race.
 */
async function afterServerSender(server: TestServer, uid: string) {
  await eventually(
    () => server.app.db.prisma.withdrawal.findUniqueOrThrow({ where: { uid } }),
    (w) => w.sendAttempts >= 1 && w.stage === 'queued',
  );
}

/** A merchant with 100 trc20usdt and a withdrawal of 10 that the server's sender has tried once. */
async function fundedWithdrawal(server: TestServer) {
  const m = await server.merchant();
  await fund(server, m.publicToken, 'trc20usdt', '100');
  const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }] } });
  const uid = res.body[0].uid as string;
  await afterServerSender(server, uid);
  return { m, uid };
}

describe.each(DATABASES)('withdrawal safety on %s', (kind) => {
  // The server's own sender stays idle (every send fails, long interval): the test drives a sender itself.
  const server = useServer(kind, { WITHDRAWAL_SEND_INTERVAL_MS: '3600000', SANDBOX_SEND_FAILURES: '1000000' });

  it('a withdrawal claimed again after a crash is sent again, never rejected by the risk hook', async () => {
    const { m, uid } = await fundedWithdrawal(server);
    const prisma = server.app.db.prisma;
    // The crash window between broadcast and record: the chain has it, the row is still `sending`, its lease over.
    const chains = sandboxRegistry({ db: prisma });
    const row = await prisma.withdrawal.findUniqueOrThrow({ where: { uid } });
    const { txHash } = await chains.forNetwork('tron', 'test').send({ id: uid, purpose: 'withdrawal', asset: 'trc20usdt', to: TRON, tag: null, amount: toMoney(row.amount) });
    await prisma.$executeRaw`UPDATE "Withdrawal" SET "stage" = 'sending', "sendAttempts" = 1, "updatedAt" = now() - interval '1 hour' WHERE "uid" = ${uid}::uuid`;
    // Meanwhile the receiver was put on the deny list.
    const moved = await sendWithdrawalBatch({ ...server.app.services.withdrawals, chains, risk: denyList([TRON]), sendLeaseMs: 100 });
    expect(moved).toBe(1);
    const after = await prisma.withdrawal.findUniqueOrThrow({ where: { uid } });
    expect([after.status, after.stage, after.txHash]).toEqual(['processing', 'sent', txHash]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '89', held: '11' });
    expect((await prisma.sandboxBroadcast.findUniqueOrThrow({ where: { transferId: uid } })).calls).toBe(2);
  });

  it('the risk hook still rejects a withdrawal before its first send', async () => {
    const { m, uid } = await fundedWithdrawal(server);
    const prisma = server.app.db.prisma;
    // As if never claimed: its first send is the test's.
    await prisma.withdrawal.update({ where: { uid }, data: { stage: 'queued', sendAttempts: 0 } });
    await sendWithdrawalBatch({ ...server.app.services.withdrawals, chains: sandboxRegistry({ db: prisma }), risk: denyList([TRON]) });
    expect((await prisma.withdrawal.findUniqueOrThrow({ where: { uid } })).status).toBe('rejected');
    expect(await prisma.sandboxBroadcast.count({ where: { transferId: uid } })).toBe(0);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '100', held: '0' });
  });

  it('a sender whose claim was taken over after its lease records nothing; the one holding it records the send once', async () => {
    const { uid } = await fundedWithdrawal(server);
    const prisma = server.app.db.prisma;
    const chains = sandboxRegistry({ db: prisma });
    // Each sender's send hangs (a slow node) until the test lets it answer.
    const hangingSend = () => {
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      const state = { hanging: false, answer };
      const registry: ChainRegistry = Object.assign(Object.create(chains) as ChainRegistry, {
        forNetwork: (...args: Parameters<ChainRegistry['forNetwork']>): ChainAdapter => {
          const adapter = chains.forNetwork(...args);
          return Object.assign(Object.create(adapter) as ChainAdapter, {
            send: async (req: Parameters<ChainAdapter['send']>[0]) => {
              state.hanging = true;
              await answered;
              return adapter.send(req);
            },
          });
        },
      });
      return { registry, state };
    };
    const deps = { ...server.app.services.withdrawals, risk: allowAll };
    const first = hangingSend();
    const stale = sendWithdrawalBatch({ ...deps, chains: first.registry, sendLeaseMs: 100 });
    await eventually(async () => first.state.hanging, Boolean);
    const claimedBy = (await prisma.withdrawal.findUniqueOrThrow({ where: { uid } })).sendAttempts;
    // Its lease ends; another sender takes the withdrawal over (a new attempt) and is sending it too.
    const second = hangingSend();
    // Every batch started until one is sending: under load the one that claimed may start hanging only after a
    // later try began (which claims nothing), so all of them are awaited below.
    const current: Promise<number>[] = [];
    await eventually(async () => {
      current.push(sendWithdrawalBatch({ ...deps, chains: second.registry, sendLeaseMs: 60_000 }));
      await Promise.race([current.at(-1), new Promise((r) => setTimeout(r, 50))]);
      return second.state.hanging;
    }, Boolean);
    // The stale sender's send answers first: the row is still `sending`, but under the new claim, so its record is
    // fenced off.
    first.state.answer();
    expect(await stale).toBe(0);
    const between = await prisma.withdrawal.findUniqueOrThrow({ where: { uid } });
    expect([between.stage, between.sendAttempts, between.txHash]).toEqual(['sending', claimedBy + 1, null]);
    // The holder's send answers (the same transaction: the send is by uid) and is recorded, once.
    second.state.answer();
    expect((await Promise.all(current)).reduce((a, b) => a + b, 0)).toBe(1);
    const after = await prisma.withdrawal.findUniqueOrThrow({ where: { uid } });
    expect(after.stage).toBe('sent');
    expect(await prisma.event.count({ where: { subjectId: uid, type: 'withdrawal.processing' } })).toBe(2);
    expect((await prisma.sandboxBroadcast.findUniqueOrThrow({ where: { transferId: uid } })).calls).toBe(2);
  });

  it('leaves the fee a short-paid invoice will charge, so its last payment is recorded and the invoice done', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
    const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'p@example.com', paymentCurrency: 'trc20usdt' } });
    // 101 due (100 + 1 fee); 100.99 arrives and is final: the invoice is wrong, the money available.
    const due = toMoney(filled.body.paymentDetails.amount);
    const pay = (amount: string) => server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: created.body.id, amount, confirmations: 19 } });
    expect((await pay(due.minus('0.01').toFixed())).status).toBe(201);
    expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status).toBe('wrong');
    expect((await balanceOf(server, token, 'trc20usdt')).available).toBe('100.99');
    const withdraw = (amount: string) =>
      server.request('POST', '/api/transactions/withdraw', { token, json: { items: [{ amount, tag: '', to: TRON, asset: 'trc20usdt' }] } });
    // The quote already counts the invoice's fee out.
    const quote = await server.graphql('{ withdrawalQuote(asset: TRC20USDT, amount: "98.99") { available total covered } }', {}, token);
    expect(quote.body.data.withdrawalQuote).toEqual({ available: '99.99', total: '99.99', covered: true });
    // Everything but the withdrawal fee would take the invoice's fee too: refused.
    const all = await withdraw('99.99');
    expect(all.body[0]).toMatchObject({ success: false, message: 'Insufficient balance: 100.99 trc20usdt needed (amount plus fee), 99.99 available' });
    expect((await withdraw('98.99')).body[0].success).toBe(true);
    // The rest of the payment arrives: recorded, the invoice done, its fee charged from what was left.
    expect((await pay('0.01')).status).toBe(201);
    expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status).toBe('done');
    expect(await balanceOf(server, token, 'trc20usdt')).toEqual({ available: '0.01', held: '99.99' });
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('a deposit is not readable as a public invoice transaction node', async () => {
    const m = await server.merchant();
    const address = (await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'ltc', internalUserId: 'u' } })).body;
    const deposit = (await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: '1' } })).body;
    const id = Buffer.from(`InvoiceTransaction:${deposit.id}`).toString('base64url');
    for (const token of [undefined, m.publicToken]) {
      const res = await server.graphql('query($id: ID!){ node(id:$id){ id } }', { id }, token);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.node).toBeNull();
    }
  });
});
