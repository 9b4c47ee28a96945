// The Solana adapter against a fake JSON-RPC node: one receiving wallet, a Solana Pay reference key per payment, the
// wallet's signatures read newest first and the new transactions in one batch, confirmations from the commitment,
// transactions that leave the chain, amounts beyond 2^53 lamports.
import { randomUUID } from 'node:crypto';
import { base58 } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solanaChainSchema } from '../../src/chains/config.ts';
import type { NodeAdapter } from '../../src/chains/registry.ts';
import { solanaAdapter, type SolanaState } from '../../src/chains/solana/adapter.ts';
import { Money } from '../../src/domain/money.ts';
import { openHarness, historyOf, type Harness } from '../support/chain-harness.ts';
import { randomSolanaKey, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';

describe('Solana over JSON-RPC (a fake node)', () => {
  let fake: FakeChains;
  let h: Harness;
  let adapter: NodeAdapter<SolanaState>;
  const config = (extra: Record<string, unknown> = {}) => solanaChainSchema.parse({ rpcUrl: fake.solanaUrl, address: fake.solana.wallet, pollMs: 100, ...extra });
  const allocate = async () => (await adapter.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency: 'sol' })).tag!;

  beforeAll(async () => {
    fake = await startFakeChains();
    h = await openHarness();
    adapter = solanaAdapter('solana', config(), h.context);
    await adapter.connect();
    await h.scan(adapter);
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it('hands out the one wallet with a fresh 32-byte reference key per payment', async () => {
    const a = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-a', paymentCurrency: 'sol' });
    const b = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-b', paymentCurrency: 'sol' });
    expect([a.address, b.address]).toEqual([fake.solana.wallet, fake.solana.wallet]);
    expect(base58.decode(a.tag!)).toHaveLength(32);
    expect(b.tag).not.toBe(a.tag);
    expect(adapter.isValidAddress(randomSolanaKey())).toBe(true);
    expect(adapter.isValidAddress(base58.encode(new Uint8Array(31).fill(7)))).toBe(false);
    expect(adapter.isValidAddress('0OIl' + randomSolanaKey().slice(4))).toBe(false);
  });

  it('reports a payment naming its reference at `confirmed` (1), then final at `finalized`; others are ignored', async () => {
    const [reference, other] = [await allocate(), await allocate()];
    const paid = fake.solana.add({ amount: '1.5', references: [reference] });
    const noReference = fake.solana.add({ amount: '2', references: [randomSolanaKey()] });
    const failed = fake.solana.add({ amount: '3', references: [reference], failed: true });
    const both = fake.solana.add({ amount: '4', references: [reference, other] });
    await h.scan(adapter);
    expect(h.reports.filter((r) => r.txHash === paid)).toEqual([
      {
        network: 'solana',
        asset: 'sol',
        txHash: paid,
        outputIndex: 0,
        from: expect.any(String),
        to: fake.solana.wallet,
        tag: reference,
        amount: new Money('1.5'),
        confirmations: 1,
        blockNumber: expect.any(BigInt),
        dropped: false,
      },
    ]);
    for (const ignored of [noReference, failed, both]) expect(historyOf(h.reports, ignored)).toEqual([]);
    await h.scan(adapter);
    fake.solana.finalize();
    await h.scan(adapter);
    await h.scan(adapter);
    expect(historyOf(h.reports, paid)).toEqual([
      [1, false],
      [32, false],
    ]);
  });

  it('reports a payment to a reference handed out while a scan was under way, before it read its page (the cursor passes it)', async () => {
    const held = fake.hold('solana getSignaturesForAddress');
    const scanned = h.scan(adapter);
    await held.reached;
    // The scan has started; the reference is handed out and paid before its page of signatures is read.
    const reference = await allocate();
    const paid = fake.solana.add({ amount: '0.75', references: [reference] });
    held.release();
    await scanned;
    expect(h.reports.filter((r) => r.txHash === paid).map((r) => [r.tag, r.amount.toFixed()])).toEqual([[reference, '0.75']]);
  });

  it('reads v0 transactions whose wallet or reference comes from an address lookup table (meta.loadedAddresses)', async () => {
    const [a, b, c] = [await allocate(), await allocate(), await allocate()];
    const referenceLoaded = fake.solana.add({ amount: '0.25', references: [a], lookup: { references: true } });
    const bothLoaded = fake.solana.add({ amount: '1.000000001', references: [b], lookup: { wallet: true, references: true } });
    const walletLoaded = fake.solana.add({ amount: '7', references: [c], lookup: { wallet: true } });
    // A lookup table's reference of someone else's payment, beside ours loaded too: several references, nothing credited.
    const twoLoaded = fake.solana.add({ amount: '3', references: [a, b], lookup: { references: true } });
    await h.scan(adapter);
    const seen = (sig: string) => h.reports.filter((r) => r.txHash === sig).map((r) => [r.tag, r.amount.toFixed(), r.confirmations]);
    expect(seen(referenceLoaded)).toEqual([[a, '0.25', 1]]);
    expect(seen(bothLoaded)).toEqual([[b, '1.000000001', 1]]);
    expect(seen(walletLoaded)).toEqual([[c, '7', 1]]);
    expect(seen(twoLoaded)).toEqual([]);
  });

  it("with a rateLimit: getTransaction batches cut to the provider's burst, a 429 (Retry-After) waited out, no payment lost", async () => {
    const limited = solanaAdapter('solana', config({ rateLimit: { perSecond: 500, burst: 10 } }), h.context);
    const state = await limited.initialState();
    const references: string[] = [];
    for (let i = 0; i < 25; i++) references.push(await allocate());
    const signatures = references.map((reference, i) => fake.solana.add({ amount: `0.${String(i + 1).padStart(3, '0')}`, references: [reference] }));
    const batchesBefore = fake.batches.length;
    fake.throttle('solana', { times: 2, retryAfter: 1 });
    const started = Date.now();
    await limited.scan(state);
    // Two 429s of Retry-After 1 s: two seconds without a request, then the scan went on.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(signatures.filter((sig) => h.reports.filter((r) => r.txHash === sig).length !== 1)).toEqual([]);
    const batches = fake.batches.slice(batchesBefore);
    expect(Math.max(...batches)).toBe(10);
    // Answered batches (the two throttled were tried again): 25 calls in three.
    expect(batches.filter((n) => n > 1)).toEqual([10, 10, 5]);
  });

  it('with confirmations 1, `confirmed` is final', async () => {
    const quick = solanaAdapter('solana', config({ confirmations: 1 }), h.context);
    const state = await quick.initialState();
    const reference = await allocate();
    const paid = fake.solana.add({ amount: '0.000000001', references: [reference] });
    const next = await quick.scan(state);
    expect(historyOf(h.reports, paid)).toEqual([[1, false]]);
    expect(next.pending).toEqual([]);
  });

  it('reports a payment that left the chain as dropped, only once its blockhash can no longer land', async () => {
    const reference = await allocate();
    const gone = fake.solana.add({ amount: '5', references: [reference] });
    await h.scan(adapter);
    fake.solana.drop(gone);
    fake.solana.advance(100);
    await h.scan(adapter);
    expect(historyOf(h.reports, gone)).toEqual([[1, false]]);
    fake.solana.advance(60);
    await h.scan(adapter);
    expect(historyOf(h.reports, gone)).toEqual([
      [1, false],
      [0, true],
    ]);
  });

  it('reads amounts beyond 2^53 lamports exactly, and many pages without losing or repeating one', async () => {
    const reference = await allocate();
    const big = fake.solana.add({ amount: '12345678.123456789', references: [reference] });
    const many = Array.from({ length: 250 }, (_, i) => fake.solana.add({ amount: `0.${String(i + 1).padStart(9, '0')}`, references: [reference] }));
    fake.solana.finalize();
    await h.scan(adapter);
    await h.scan(adapter);
    expect(h.reports.find((r) => r.txHash === big)!.amount.toFixed()).toBe('12345678.123456789');
    for (const sig of many) expect(historyOf(h.reports, sig)).toEqual([[32, false]]);
    expect(h.reports.filter((r) => r.txHash === many[249]).map((r) => r.amount.toFixed())).toEqual(['0.00000025']);
  });

  it('fails a scan on a JSON-RPC error, with its message, and reads the same signatures once the node is back', async () => {
    const reference = await allocate();
    const paid = fake.solana.add({ amount: '2', references: [reference] });
    fake.solana.erroring = true;
    await expect(h.scan(adapter)).rejects.toThrow(/getSignaturesForAddress failed: Node is behind by 42 slots \(-32005\)/);
    fake.solana.erroring = false;
    await h.scan(adapter);
    expect(historyOf(h.reports, paid)).toEqual([[1, false]]);
  });

  it('answers finalized balances; sends nothing', async () => {
    const [balance] = await adapter.watchedBalances([fake.solana.wallet]);
    expect(balance).toMatchObject({ address: fake.solana.wallet, asset: 'sol' });
    expect(new Money(balance!.amount).gt(12_345_678)).toBe(true);
    await expect(adapter.send({ id: randomUUID(), purpose: 'withdrawal', asset: 'sol', to: randomSolanaKey(), tag: null, amount: new Money(1) })).rejects.toThrow(/not supported/);
  });
});
