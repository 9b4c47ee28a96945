// The TON adapter against a fake toncenter v2: one deposit wallet, a fresh tag per payment as the comment, the
// wallet's history read newest first down to where the last scan stopped (pages, and a backlog over several scans).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tonChainSchema } from '../../src/chains/config.ts';
import type { NodeAdapter } from '../../src/chains/registry.ts';
import { tonAdapter, type TonState } from '../../src/chains/ton/adapter.ts';
import { Money } from '../../src/domain/money.ts';
import { openHarness, type Harness } from '../support/chain-harness.ts';
import { randomTonAddress, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { tonFriendly } from '../support/fake-chains/ton.ts';

describe('TON over toncenter v2 (a fake)', () => {
  let fake: FakeChains;
  let h: Harness;
  let adapter: NodeAdapter<TonState>;
  const config = (extra: Record<string, unknown> = {}) => tonChainSchema.parse({ apiUrl: fake.tonUrl, address: fake.ton.wallet, pollMs: 100, ...extra });
  const allocate = async () => (await adapter.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency: 'ton' })).tag!;
  const reported = (hash: string) => h.reports.filter((r) => r.txHash === hash);

  beforeAll(async () => {
    fake = await startFakeChains();
    h = await openHarness();
    adapter = tonAdapter('ton', config(), h.context);
    await adapter.connect();
    await h.scan(adapter);
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it('hands out the one wallet with a fresh numeric tag per payment', async () => {
    const a = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-a', paymentCurrency: 'ton' });
    const b = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-b', paymentCurrency: 'ton' });
    expect(a.address).toBe(fake.ton.wallet);
    expect(b.address).toBe(fake.ton.wallet);
    expect(a.tag).toMatch(/^[1-9]\d*$/);
    expect(b.tag).not.toBe(a.tag);
    expect(adapter.isValidAddress(randomTonAddress())).toBe(true);
    // Another account's checksum, a testnet address on mainnet, and another network's address are refused.
    const valid = randomTonAddress();
    expect(adapter.isValidAddress(valid.slice(0, 10) + (valid[10] === 'A' ? 'B' : 'A') + valid.slice(11))).toBe(false);
    expect(adapter.isValidAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(false);
  });

  it('reports transfers whose comment is one of its tags, final at once; other comments, bodies and own sends are ignored', async () => {
    const tag = await allocate();
    const paid = fake.ton.add({ amount: '2.5', comment: tag });
    const spaced = fake.ton.add({ amount: '0.000000001', comment: ` ${tag}\n` });
    const stranger = fake.ton.add({ amount: '1', comment: '987654321' });
    const noText = fake.ton.add({ amount: '1', comment: null });
    fake.ton.addOutgoing();
    await h.scan(adapter);
    expect(reported(paid)).toEqual([
      {
        network: 'ton',
        asset: 'ton',
        txHash: paid,
        outputIndex: 0,
        from: expect.any(String),
        to: fake.ton.wallet,
        tag,
        amount: new Money('2.5'),
        confirmations: 1,
        blockNumber: null,
        dropped: false,
      },
    ]);
    expect(reported(spaced).map((r) => [r.tag, r.amount.toFixed()])).toEqual([[tag, '0.000000001']]);
    expect(reported(stranger)).toEqual([]);
    expect(reported(noText)).toEqual([]);
    // Nothing is reported twice.
    await h.scan(adapter);
    expect(reported(paid)).toHaveLength(1);
  });

  it('reports a transfer to a tag handed out while a scan was under way, before it read its page (the cursor passes it)', async () => {
    const held = fake.hold('ton /getTransactions');
    const scanned = h.scan(adapter);
    await held.reached;
    // The scan has started; the tag is handed out and paid before its page is read.
    const tag = await allocate();
    const paid = fake.ton.add({ amount: '0.75', comment: tag });
    held.release();
    await scanned;
    expect(reported(paid).map((r) => [r.tag, r.amount.toFixed()])).toEqual([[tag, '0.75']]);
  });

  it('hands out the non-bounceable form of a wallet that is not deployed (TON guidance), the configured one once it is', async () => {
    fake.ton.state = 'uninitialized';
    try {
      const fresh = tonAdapter('ton', config(), h.context);
      await fresh.connect();
      const before = await fresh.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency: 'ton' });
      expect(before.address).toBe(fake.ton.nonBounceableWallet);
      expect(before.address).toMatch(/^UQ/);
      fake.ton.state = 'active';
      await fresh.scan(await fresh.initialState());
      expect((await fresh.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency: 'ton' })).address).toBe(fake.ton.wallet);
    } finally {
      fake.ton.state = 'active';
    }
  });

  it('credits nothing of a transfer that bounced (value in, returned in out_msgs); a non-bounceable one to the undeployed wallet stays and counts', async () => {
    const [bouncedTag, keptTag] = [await allocate(), await allocate()];
    fake.ton.state = 'uninitialized';
    try {
      const bounced = fake.ton.add({ amount: '5', comment: bouncedTag, bounceable: true });
      const kept = fake.ton.add({ amount: '5', comment: keptTag, bounceable: false });
      await h.scan(adapter);
      expect(reported(bounced)).toEqual([]);
      expect(reported(kept).map((r) => [r.tag, r.amount.toFixed()])).toEqual([[keptTag, '5']]);
    } finally {
      fake.ton.state = 'active';
    }
    // To a deployed wallet a bounceable transfer stays.
    const stays = fake.ton.add({ amount: '1.25', comment: bouncedTag, bounceable: true });
    await h.scan(adapter);
    expect(reported(stays).map((r) => [r.tag, r.amount.toFixed()])).toEqual([[bouncedTag, '1.25']]);
  });

  it('reads a backlog page by page, over several scans when it is long, and loses nothing', async () => {
    const tag = await allocate();
    // 25 pages of 100: more than one scan reads (20 pages), so the backlog is finished by the next one.
    const hashes = Array.from({ length: 2_450 }, (_, i) => fake.ton.add({ amount: `0.${String(i + 1).padStart(9, '0')}`, comment: tag }));
    const first = await h.scan(adapter);
    expect(first.backlog).not.toBeNull();
    const during = fake.ton.add({ amount: '3', comment: tag });
    const second = await h.scan(adapter);
    expect(second.backlog).toBeNull();
    await h.scan(adapter);
    const counts = new Map<string, number>();
    for (const r of h.reports) counts.set(r.txHash, (counts.get(r.txHash) ?? 0) + 1);
    expect([...hashes, during].filter((x) => counts.get(x) !== 1)).toEqual([]);
    expect(fake.served.get('ton /getTransactions')).toBeGreaterThan(25);
  });

  it('compares accounts, not strings: the API writes the wallet in another friendly form', async () => {
    const tag = await allocate();
    const nonBounceable = tonFriendly(Buffer.from(fake.ton.wallet, 'base64url').subarray(2, 34), false);
    const other = tonAdapter('ton', config({ address: nonBounceable }), h.context);
    const state = await other.initialState();
    const hash = fake.ton.add({ amount: '1', comment: tag });
    await other.scan(state);
    expect(reported(hash).map((r) => r.to)).toEqual([nonBounceable]);
  });

  it('fails a scan on an error answer, with its message, and reads the same transactions once the API is back', async () => {
    const tag = await allocate();
    const hash = fake.ton.add({ amount: '1', comment: tag });
    fake.ton.erroring = true;
    await expect(h.scan(adapter)).rejects.toThrow(/getTransactions failed: LITE_SERVER_UNKNOWN: cannot load block/);
    fake.ton.erroring = false;
    await h.scan(adapter);
    expect(reported(hash)).toHaveLength(1);
  });

  it('passes over a refused report and goes on; is final at one confirmation only; sends nothing', async () => {
    const [refused, taken] = [await allocate(), await allocate()];
    h.unknown.add(refused);
    const a = fake.ton.add({ amount: '1', comment: refused });
    const b = fake.ton.add({ amount: '1', comment: taken });
    await h.scan(adapter);
    expect(reported(a)).toEqual([]);
    expect(reported(b)).toHaveLength(1);
    expect(() => tonAdapter('ton', config({ confirmations: 3 }), h.context)).toThrow(/confirmations must be 1/);
    await expect(adapter.send({ id: randomUUID(), purpose: 'withdrawal', asset: 'ton', to: randomTonAddress(), tag: '1', amount: new Money(1) })).rejects.toThrow(/not supported/);
  });
});
