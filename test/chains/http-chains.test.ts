// Tron, TON and Solana end to end: the real server with CHAINS_FILE naming the fake APIs. Invoices get real-format
// addresses (derived for Tron; the wallet plus a tag or reference key for TON and Solana), the fake chains pay them,
// the watchers report, and the invoices settle after their confirmations: done, wrong when short, never credited when
// the transfer drops. A Tron withdrawal is signed by the hot wallet, stored, broadcast and followed to its webhooks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveAddress, parseExtendedPublicKey } from '../../src/chains/hd.ts';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { Money } from '../../src/domain/money.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { FAKE_USDT_CONTRACT, randomTronAddress, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { balanceOf, eventually } from '../support/funding.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
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
const statusBecomes = (server: TestServer, id: string, status: string) => eventually(() => invoiceOf(server, id), (i) => i.status === status);

describe.each(DATABASES)('Tron, TON and Solana over their HTTP APIs, end to end on %s', { timeout: 120_000 }, (kind) => {
  let fake: FakeChains;
  let receiver: Receiver;
  let secret = '';
  // Filled before the server starts (its beforeAll runs after this one).
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' };
  beforeAll(async () => {
    fake = await startFakeChains();
    receiver = await startReceiver(() => secret);
    Object.assign(
      env,
      chainsEnv({
        tron: { apiUrl: fake.tronUrl, xpub: testXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 3, pollMs: 100 },
        ton: { apiUrl: fake.tonUrl, address: fake.ton.wallet, pollMs: 100 },
        solana: { rpcUrl: fake.solanaUrl, address: fake.solana.wallet, pollMs: 100 },
      }),
    );
  });
  const server = useServer(kind, env);
  afterAll(async () => {
    await receiver?.close();
    await fake?.close();
  });

  it('lists the three chains as real nodes in /health', async () => {
    const health = await eventually(
      () => server.request('GET', '/health').then((r) => r.body),
      (b) => ['tron', 'ton', 'solana'].every((n) => b.chains.find((c: { network: string }) => c.network === n)?.state === 'ok'),
    );
    expect(health.status).toBe('ok');
    expect(health.chains.filter((c: { live: string }) => c.live === 'node').map((c: { network: string }) => c.network)).toEqual(['tron', 'solana', 'ton']);
  });

  it('trc20usdt: a derived address; paid on chain it is processing, then done after 3 confirmations', async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'trc20usdt');
    expect(invoice.address.tag).toBeNull();
    const derived = await server.app.db.prisma.derivedAddress.findFirstOrThrow({ where: { network: 'tron', ownerId: invoice.id } });
    expect(invoice.address.address).toBe(deriveAddress(parseExtendedPublicKey(testXpub('tron', false)), 'tron', derived.index));
    fake.tron.addBlock([{ asset: 'usdt', to: invoice.address.address, units: units(invoice.amount, 6) }]);
    const seen = await statusBecomes(server, invoice.id, 'processing');
    expect(seen.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'seen', confirmations: 1, from: 'trc20usdt' })]);
    fake.tron.advance(2);
    const done = await statusBecomes(server, invoice.id, 'done');
    expect(done.invoiceTransactions).toEqual([expect.objectContaining({ status: 'confirmed', confirmations: 3 })]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '100', held: '0' });
  });

  it('trc20usdt: underpaid is wrong; a transfer dropped before its confirmations is never credited', async () => {
    const m = await server.liveMerchant();
    const short = await proceeded(server, m.publicToken, 'trc20usdt');
    fake.tron.addBlock([{ asset: 'usdt', to: short.address.address, units: 50_000_000n }]);
    fake.tron.advance(2);
    await statusBecomes(server, short.id, 'wrong');

    const dropped = await proceeded(server, m.publicToken, 'trc20usdt');
    const { txIDs } = fake.tron.addBlock([{ asset: 'usdt', to: dropped.address.address, units: units(dropped.amount, 6) }]);
    await statusBecomes(server, dropped.id, 'processing');
    fake.tron.drop(txIDs[0]!);
    fake.tron.advance(45);
    await eventually(
      () => server.app.db.prisma.chainTransfer.findFirst({ where: { txHash: txIDs[0]! } }),
      (t) => t?.state === 'dropped',
    );
    const after = await invoiceOf(server, dropped.id);
    expect(after.status).toBe('processing');
    expect(after.paymentDetails.paidAmount).toBe('0');
    // Only the short payment (confirmed, wrong) is the merchant's.
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '50', held: '0' });
  });

  it('ton: the wallet and a fresh tag; a transfer with the tag as comment settles it at once; short is wrong', async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'ton');
    expect(invoice.address.address).toBe(fake.ton.wallet);
    expect(invoice.address.tag).toMatch(/^\d+$/);
    const other = await proceeded(server, m.publicToken, 'ton');
    expect(other.address.tag).not.toBe(invoice.address.tag);
    fake.ton.add({ amount: invoice.amount, comment: invoice.address.tag });
    fake.ton.add({ amount: '1', comment: other.address.tag });
    fake.ton.add({ amount: '5', comment: 'a tag nobody handed out' });
    const done = await statusBecomes(server, invoice.id, 'done');
    expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed', confirmations: 1 })]);
    await statusBecomes(server, other.id, 'wrong');
  });

  it('ton and sol cannot be sent from here: withdrawals, refunds and auto-withdrawals in them are refused up front, nothing held', async () => {
    const m = await server.liveMerchant();
    const paid = await proceeded(server, m.publicToken, 'ton');
    const short = await proceeded(server, m.publicToken, 'ton');
    fake.ton.add({ amount: paid.amount, comment: paid.address.tag });
    fake.ton.add({ amount: '1', comment: short.address.tag });
    await statusBecomes(server, paid.id, 'done');
    await statusBecomes(server, short.id, 'wrong');

    const before = await balanceOf(server, m.publicToken, 'ton');
    expect(before.held).toBe('0');
    const withdraw = await server.request('POST', '/api/transactions/withdraw', {
      token: m.publicToken,
      json: { items: [{ amount: '1', tag: '7', to: fake.ton.wallet, asset: 'ton' }] },
    });
    expect(withdraw.status, withdraw.text).toBe(200);
    expect(withdraw.body).toEqual([{ success: false, uid: '', message: expect.stringMatching(/^Withdrawals in ton are not possible: sending on ton is not supported/) }]);
    expect(await balanceOf(server, m.publicToken, 'ton')).toEqual(before);

    const refund = await server.request('POST', `/api/invoices/v1/regular/${short.id}/refund`, { token: m.publicToken, json: { address: fake.ton.wallet, tag: '9' } });
    expect(refund.status, refund.text).toBe(503);
    expect(refund.body.error.message).toMatch(/^Refunds in ton cannot be sent: sending on ton is not supported/);
    expect((await invoiceOf(server, short.id)).status).toBe('wrong');

    const auto = await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: m.publicToken,
      json: { assets: { sol: { amount: 1, isEnabled: true, withdrawalTag: null, withdrawalAddress: fake.solana.wallet } } },
    });
    expect(auto.status, auto.text).toBe(422);
    expect(auto.body.error.details).toEqual([{ path: 'assets.sol.isEnabled', message: expect.stringContaining('Withdrawals in sol are not possible: sending on solana is not supported') }]);
  });

  it('sol: the wallet and a reference key (in the Solana Pay URI); confirmed is processing, finalized is done', async () => {
    const m = await server.liveMerchant();
    const invoice = await proceeded(server, m.publicToken, 'sol');
    expect(invoice.address.address).toBe(fake.solana.wallet);
    const reference = invoice.address.tag!;
    const uri = await server.graphql(`query($id: ID!) { invoice(id: $id) { paymentUri } }`, { id: invoice.id });
    expect(uri.body.data.invoice.paymentUri).toBe(`solana:${fake.solana.wallet}?amount=${new Money(invoice.amount).toFixed()}&reference=${reference}`);
    fake.solana.add({ amount: invoice.amount, references: [reference] });
    await statusBecomes(server, invoice.id, 'processing');
    fake.solana.finalize();
    const done = await statusBecomes(server, invoice.id, 'done');
    expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, status: 'confirmed', confirmations: 32 })]);
  });

  it('a Tron withdrawal is signed by the hot wallet, stored, broadcast, and followed to its webhooks; a failed one is rejected', async () => {
    const m = await server.liveMerchant();
    secret = m.secretKey;
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } })).status).toBe(200);
    const funding = await proceeded(server, m.publicToken, 'trc20usdt');
    fake.tron.addBlock([{ asset: 'usdt', to: funding.address.address, units: units(funding.amount, 6) }]);
    fake.tron.advance(2);
    await statusBecomes(server, funding.id, 'done');

    const [to, toFailing] = [randomTronAddress(), randomTronAddress()];
    const res = await server.request('POST', '/api/transactions/withdraw', {
      token: m.publicToken,
      json: { items: [{ amount: 12.25, tag: '', to, asset: 'trc20usdt' }, { amount: '7', tag: '', to: toFailing, asset: 'trc20usdt' }] },
    });
    expect(res.status, res.text).toBe(200);
    const [uid, failingUid] = res.body.map((r: { uid: string }) => r.uid) as [string, string];
    const broadcasts = await eventually(
      async () => fake.tron.broadcasts.filter((b) => b.to === to || b.to === toFailing),
      (b) => b.length === 2,
    );
    const hot = testSigner.address('tron', false, HOT_WALLET);
    expect(broadcasts.map((b) => [b.to, b.signer, b.units])).toEqual([
      [to, hot, 12_250_000n],
      [toFailing, hot, 7_000_000n],
    ]);
    const sent = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: uid } });
    expect(sent).toMatchObject({ network: 'tron', purpose: 'withdrawal', fromAddress: hot, toAddress: to, txHash: broadcasts[0]!.txID });

    fake.tron.fail(broadcasts[1]!.txID);
    fake.tron.addBlock();
    fake.tron.advance(2);
    const ofWithdrawals = () => receiver.received.filter((r) => r.json['type'] === 'withdrawal');
    await receiver.waitFor(() => ofWithdrawals().filter((r) => r.json['status'] !== 'processing').length === 2, 20_000);
    const txHash = broadcasts[0]!.txID;
    const head = `{"type":"withdrawal","status":`;
    expect(ofWithdrawals().filter((r) => r.json['uid'] === uid).map((r) => r.body)).toEqual([
      `${head}"processing","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${to}","txHash":"","uid":"${uid}"}`,
      `${head}"processing","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${to}","txHash":"${txHash}","uid":"${uid}"}`,
      `${head}"done","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${to}","txHash":"${txHash}","uid":"${uid}"}`,
    ]);
    expect(ofWithdrawals().filter((r) => r.json['uid'] === failingUid).map((r) => r.json['status'])).toEqual(['processing', 'processing', 'rejected']);
    expect(ofWithdrawals().every((r) => r.specSignatureValid && r.standardSignatureValid)).toBe(true);
    // 100 in, 12.25 + 1 out; the failed one's hold came back.
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '86.75', held: '0' });
    expect(await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: failingUid } })).toMatchObject({ status: 'failed' });
  });
});
