// The Tron adapter against a fake java-tron HTTP API: derivation (cross-checked with an independent implementation),
// the block scan (TRX and USDT, confirmations, reorgs, refused reports), sends (checked, signed by the hot wallet,
// stored before the broadcast, once per id, replaced only when expired) and their outcomes, custody balances.
import { randomUUID } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createBase58check } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentCurrency } from '../../src/domain/assets.ts';
import { tronChainSchema } from '../../src/chains/config.ts';
import { HOT_WALLET, Signer } from '../../src/chains/signer.ts';
import { tronAdapter, type TronState } from '../../src/chains/tron/adapter.ts';
import type { NodeAdapter } from '../../src/chains/registry.ts';
import { Money } from '../../src/domain/money.ts';
import { TEST_MNEMONIC, testSigner, testXpub } from '../support/chains.ts';
import { openHarness, historyOf, type Harness } from '../support/chain-harness.ts';
import { FAKE_USDT_CONTRACT, randomTronAddress, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';

const base58check = createBase58check(sha256);

/** m/44'/195'/0'/0/i of a mnemonic, from the private key: the way wallets derive it, without src/chains/hd.ts. */
function walletAddress(mnemonic: string, index: number): string {
  const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/195'/0'/0/${index}`);
  const publicKey = secp256k1.getPublicKey(key.privateKey!, false);
  return base58check.encode(Uint8Array.of(0x41, ...keccak_256(publicKey.subarray(1)).subarray(12)));
}

describe('Tron over its HTTP API (a fake full node)', () => {
  let fake: FakeChains;
  let h: Harness;
  let adapter: NodeAdapter<TronState>;
  const config = (extra: Record<string, unknown> = {}) =>
    tronChainSchema.parse({ apiUrl: fake.tronUrl, xpub: testXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 3, pollMs: 100, ...extra });
  const allocate = async (paymentCurrency: PaymentCurrency = 'trc20usdt') =>
    (await adapter.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency })).address;
  const transfer = (asset: 'trx' | 'trc20usdt', amount: string) => ({ id: randomUUID(), purpose: 'withdrawal', asset, to: randomTronAddress(), tag: null, amount: new Money(amount) }) as const;

  beforeAll(async () => {
    fake = await startFakeChains();
    h = await openHarness();
    adapter = tronAdapter('tron', config(), h.context);
    await adapter.connect();
    await h.scan(adapter);
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it('hands out addresses derived watch-only from the xpub, each index once, the ones wallets derive from the mnemonic', async () => {
    // The independent derivation first agrees with the address wallets show for BIP-39's all-"abandon" mnemonic.
    expect(walletAddress('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about', 0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    const first = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-a', paymentCurrency: 'trc20usdt' });
    const second = await adapter.allocateAddress({ companyId: randomUUID(), ownerId: 'invoice-b', paymentCurrency: 'trx' });
    expect(first).toEqual({ address: walletAddress(TEST_MNEMONIC, 0), tag: null });
    expect(second.address).toBe(walletAddress(TEST_MNEMONIC, 1));
    const rows = await h.context.db.derivedAddress.findMany({ where: { network: 'tron' }, orderBy: { index: 'asc' } });
    expect(rows.map((r) => [r.index, r.address, r.ownerId])).toEqual([
      [0, first.address, 'invoice-a'],
      [1, second.address, 'invoice-b'],
    ]);
    expect(adapter.isValidAddress(first.address)).toBe(true);
    expect(adapter.isValidAddress(first.address.slice(0, -1) + (first.address.endsWith('a') ? 'b' : 'a'))).toBe(false);
    expect(adapter.isValidAddress('0x52908400098527886E0F7030069857D2E4169EE7')).toBe(false);
  });

  it('reports TRX and USDT transfers to its addresses as they deepen, until final, and nothing else', async () => {
    const to = await allocate();
    const { number, txIDs } = fake.tron.addBlock([
      { asset: 'trx', to, units: 25_000_000n },
      { asset: 'usdt', to, units: 101_000_001n },
      { asset: 'usdt', to: randomTronAddress(), units: 5_000_000n },
    ]);
    const [trx, usdt, stranger] = txIDs as [string, string, string];
    await h.scan(adapter);
    expect(h.reports.filter((r) => r.to === to)).toEqual([
      expect.objectContaining({ network: 'tron', asset: 'trx', txHash: trx, outputIndex: 0, to, tag: null, confirmations: 1, blockNumber: BigInt(number), dropped: false }),
      expect.objectContaining({ network: 'tron', asset: 'trc20usdt', txHash: usdt, outputIndex: 0, to, confirmations: 1, blockNumber: BigInt(number), dropped: false }),
    ]);
    const amounts = h.reports.filter((r) => r.to === to).map((r) => r.amount.toFixed());
    expect(amounts).toEqual(['25', '101.000001']);
    expect(h.reports.find((r) => r.txHash === usdt)!.from).toMatch(/^T/);
    fake.tron.advance(1);
    await h.scan(adapter);
    fake.tron.advance(5);
    await h.scan(adapter);
    await h.scan(adapter);
    expect(historyOf(h.reports, trx)).toEqual([
      [1, false],
      [2, false],
      [7, false],
    ]);
    expect(historyOf(h.reports, usdt)).toEqual(historyOf(h.reports, trx));
    expect(historyOf(h.reports, stranger)).toEqual([]);
  });

  it('reports a transfer to an address handed out while a scan was under way, in a block it then reads (`next` passes it)', async () => {
    const held = fake.hold('tron /wallet/getnowblock');
    const scanned = h.scan(adapter);
    await held.reached;
    // The scan has started; the address is handed out and paid in a new block before the scan reads the head.
    const to = await allocate('trx');
    const { txIDs: [paid] } = fake.tron.addBlock([{ asset: 'trx', to, units: 3_000_000n }]);
    held.release();
    await scanned;
    expect(h.reports.filter((r) => r.txHash === paid).map((r) => [r.to, r.amount.toFixed()])).toEqual([[to, '3']]);
  });

  it('reads a reorg again from where the chain forked; a transfer it took out is dropped once it can never come back', async () => {
    const [a, b] = [await allocate(), await allocate('trx')];
    const { txIDs: [gone] } = fake.tron.addBlock([{ asset: 'usdt', to: a, units: 7_000_000n }]);
    const { txIDs: [kept] } = fake.tron.addBlock([{ asset: 'trx', to: b, units: 1_000_000n }]);
    await h.scan(adapter);
    fake.tron.drop(gone!);
    fake.tron.advance(1);
    await h.scan(adapter); // sees the fork
    await h.scan(adapter); // reads the new branch
    expect(historyOf(h.reports, gone!)).toEqual([[2, false]]);
    // Past its expiration by the head block's clock (60 s) and the margin (60 s): 3-second blocks.
    fake.tron.advance(45);
    await h.scan(adapter);
    expect(historyOf(h.reports, gone!)).toEqual([
      [2, false],
      [0, true],
    ]);
    // The other transfer of the replaced blocks was found again in the new branch and became final there.
    expect(historyOf(h.reports, kept!)).toEqual([
      [1, false],
      [2, false],
      [47, false],
    ]);
  });

  it('reads a block again while the API lacks its results ([], {}, partial; an HTTP-200 error fails the scan): its USDT transfer is reported once, nothing skipped', async () => {
    const to = await allocate();
    for (const answer of ['[]', '{}', 'partial', 'error'] as const) {
      const { number, txIDs } = fake.tron.addBlock([
        { asset: 'trx', to: randomTronAddress(), units: 1_000_000n },
        { asset: 'usdt', to, units: 4_000_000n },
      ]);
      fake.tron.answerNext('/wallet/gettransactioninfobyblocknum', answer, { num: number });
      if (answer === 'error') {
        await expect(h.scan(adapter), answer).rejects.toThrow(/gettransactioninfobyblocknum .*failed: class java.lang.NullPointerException/);
      } else {
        // The cursor stays at the block: the blocks before it are read, it is not.
        expect((await h.scan(adapter)).next, answer).toBe(number);
        expect(historyOf(h.reports, txIDs[1]!), answer).toEqual([]);
      }
      const state = await h.scan(adapter);
      expect(state.next, answer).toBe(number + 1);
      expect(historyOf(h.reports, txIDs[1]!), answer).toEqual([[1, false]]);
    }
    // A block the head's backend has and the block's backend has not yet ({}): read at the next scan.
    const { number, txIDs } = fake.tron.addBlock([{ asset: 'usdt', to, units: 5_000_000n }]);
    fake.tron.answerNext('/wallet/getblockbynum', '{}', { num: number });
    expect((await h.scan(adapter)).next).toBe(number);
    expect((await h.scan(adapter)).next).toBe(number + 1);
    expect(historyOf(h.reports, txIDs[0]!)).toEqual([[1, false]]);
  });

  it("java-tron's HTTP-200 error never reads as empty or zero: balances fail, a failed constant call fails, an open send is not failed", async () => {
    const to = await allocate();
    fake.tron.addBlock([
      { asset: 'usdt', to, units: 3_000_000n },
      { asset: 'trx', to, units: 2_000_000n },
    ]);
    fake.tron.answerNext('/walletsolidity/getaccount', 'error');
    await expect(adapter.watchedBalances([to])).rejects.toThrow(/getaccount .*failed: class java.lang.NullPointerException/);
    fake.tron.answerNext('/walletsolidity/triggerconstantcontract', { fixture: 'tron/triggerconstantcontract-error' });
    await expect(adapter.watchedBalances([to])).rejects.toThrow(/could not read the USDT balance .*CONTRACT_VALIDATE_ERROR Smart contract is not exist\./);
    fake.tron.answerNext('/walletsolidity/triggerconstantcontract', 'error');
    await expect(adapter.watchedBalances([to])).rejects.toThrow(/triggerconstantcontract .*failed/);
    expect(await adapter.watchedBalances([to])).toEqual([
      { address: to, asset: 'trx', amount: '2' },
      { address: to, asset: 'trc20usdt', amount: '3' },
    ]);

    // A send stored but never broadcast (a crash), expired: an error answer about it leaves it open...
    const usdt = transfer('trc20usdt', '1.5');
    const held = fake.hold('tron /wallet/broadcasttransaction');
    const interrupted = adapter.send(usdt);
    await held.reached;
    held.fail();
    await expect(interrupted).rejects.toThrow(/503/);
    fake.tron.advance(45);
    fake.tron.answerNext('/wallet/gettransactioninfobyid', 'error');
    await h.scan(adapter);
    expect(h.outgoing.filter((o) => o.id === usdt.id)).toEqual([]);
    expect(await h.context.db.chainSend.findUnique({ where: { id: usdt.id } })).toMatchObject({ status: 'signed' });
    // ... and "not on chain" ({}) past its expiration fails it.
    await h.scan(adapter);
    expect(h.outgoing.filter((o) => o.id === usdt.id)).toEqual([expect.objectContaining({ outcome: 'failed' })]);
  });

  it("with a rateLimit: a throttled API (TronGrid's 403 and 503) is backed off and the scan goes on, the transfer reported once", async () => {
    const limited = tronAdapter('tron', config({ rateLimit: { perSecond: 50, burst: 5 } }), h.context);
    const state = await limited.initialState();
    const to = await allocate();
    const { txIDs } = fake.tron.addBlock([{ asset: 'usdt', to, units: 6_000_000n }]);
    fake.tron.advance(1);
    fake.throttle('tron', { times: 1, status: 403, retryAfter: 1 });
    fake.throttle('tron', { times: 1, status: 503 });
    const started = Date.now();
    const next = await limited.scan(state);
    // 1 s of Retry-After, then a backoff of 2 s (the second throttling in a row).
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(next.next).toBe(fake.tron.head.number + 1);
    expect(historyOf(h.reports, txIDs[0]!)).toEqual([[2, false]]);
    const throttled = fake.log.filter((l) => l.provider === 'tron' && l.throttled);
    expect(throttled).toHaveLength(2);
    const after = fake.log.filter((l) => l.provider === 'tron' && l.at > throttled[0]!.at);
    expect(after[0]!.at - throttled[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('passes over a transfer the service refuses (not a payment address) and goes on', async () => {
    const [refused, taken] = [await allocate(), await allocate()];
    h.unknown.add(refused);
    const { number, txIDs } = fake.tron.addBlock([
      { asset: 'usdt', to: refused, units: 1_000_000n },
      { asset: 'usdt', to: taken, units: 2_000_000n },
    ]);
    const state = await h.scan(adapter);
    expect(h.reports.some((r) => r.txHash === txIDs[0])).toBe(false);
    expect(historyOf(h.reports, txIDs[1]!)).toEqual([[1, false]]);
    expect(state.next).toBe(number + 1);
  });

  it('sends USDT and TRX: built by the node, checked, signed by the hot wallet, stored before the broadcast, one transaction per id', async () => {
    const hot = testSigner.address('tron', false, HOT_WALLET);
    const usdt = transfer('trc20usdt', '12.5');
    const trx = transfer('trx', '3.000001');
    const first = await adapter.send(usdt);
    expect(await adapter.send(usdt)).toEqual(first);
    const trxSent = await adapter.send(trx);
    const accepted = fake.tron.broadcasts.filter((b) => b.txID === first.txHash || b.txID === trxSent.txHash);
    expect(accepted).toEqual([
      { txID: first.txHash, signer: hot, to: usdt.to, units: 12_500_000n, asset: 'usdt' },
      { txID: trxSent.txHash, signer: hot, to: trx.to, units: 3_000_001n, asset: 'trx' },
    ]);
    const stored = await h.context.db.chainSend.findUnique({ where: { id: usdt.id } });
    expect(stored).toMatchObject({ network: 'tron', purpose: 'withdrawal', asset: 'trc20usdt', fromAddress: hot, toAddress: usdt.to, txHash: first.txHash, status: 'sent' });
    expect(JSON.parse(stored!.rawTx).signature[0]).toMatch(/^[0-9a-f]{128}(1b|1c)$/);

    fake.tron.addBlock(); // mines both
    await h.scan(adapter);
    expect(h.outgoing.filter((o) => o.id === usdt.id)).toEqual([]);
    fake.tron.advance(2);
    await h.scan(adapter);
    expect(h.outgoing.filter((o) => o.id === usdt.id || o.id === trx.id)).toEqual([
      { network: 'tron', purpose: 'withdrawal', id: usdt.id, txHash: first.txHash, outcome: 'confirmed' },
      { network: 'tron', purpose: 'withdrawal', id: trx.id, txHash: trxSent.txHash, outcome: 'confirmed' },
    ]);
    expect(await h.context.db.chainSend.findUnique({ where: { id: usdt.id } })).toMatchObject({ status: 'confirmed', blockNumber: expect.any(BigInt) });
    expect((await h.context.db.chainSend.findUnique({ where: { id: usdt.id } }))!.fee!.toString()).toBe('13.84485');
    // A confirmed send answers its transaction again, without a broadcast.
    const broadcasts = fake.served.get('tron /wallet/broadcasttransaction');
    expect(await adapter.send(usdt)).toEqual(first);
    expect(fake.served.get('tron /wallet/broadcasttransaction')).toBe(broadcasts);
  });

  it('reports a send that failed on chain as failed, and an outcome the service has not recorded yet again later', async () => {
    const usdt = transfer('trc20usdt', '1');
    const { txHash } = await adapter.send(usdt);
    fake.tron.fail(txHash);
    fake.tron.addBlock();
    fake.tron.advance(2);
    h.outgoingNotRecorded = true;
    await h.scan(adapter);
    h.outgoingNotRecorded = false;
    expect(await h.context.db.chainSend.findUnique({ where: { id: usdt.id } })).toMatchObject({ status: 'sent' });
    await h.scan(adapter);
    expect(h.outgoing.filter((o) => o.id === usdt.id)).toEqual([{ network: 'tron', purpose: 'withdrawal', id: usdt.id, txHash, outcome: 'failed' }]);
    expect(await h.context.db.chainSend.findUnique({ where: { id: usdt.id } })).toMatchObject({ status: 'failed' });
  });

  it('signs nothing the node built differently from what was asked', async () => {
    fake.tron.tamperBuilds = true;
    try {
      const usdt = transfer('trc20usdt', '2');
      await expect(adapter.send(usdt)).rejects.toThrow(/not the one asked for.*not signed/);
      const trx = transfer('trx', '2');
      await expect(adapter.send(trx)).rejects.toThrow(/not the one asked for/);
      expect(await h.context.db.chainSend.count({ where: { id: { in: [usdt.id, trx.id] } } })).toBe(0);
    } finally {
      fake.tron.tamperBuilds = false;
    }
  });

  it('signs nothing whose raw_data (what java-tron serialises and verifies) is not its raw_data_hex', async () => {
    fake.tron.tamperJson = true;
    try {
      const usdt = transfer('trc20usdt', '2');
      await expect(adapter.send(usdt)).rejects.toThrow(/its raw_data is not its raw_data_hex\): not signed/);
      const trx = transfer('trx', '2');
      await expect(adapter.send(trx)).rejects.toThrow(/its raw_data is not its raw_data_hex/);
      expect(await h.context.db.chainSend.count({ where: { id: { in: [usdt.id, trx.id] } } })).toBe(0);
    } finally {
      fake.tron.tamperJson = false;
    }
  });

  it('replaces a stored transaction that expired before reaching the chain, once, and sends the new one', async () => {
    const usdt = transfer('trc20usdt', '4');
    const held = fake.hold('tron /wallet/broadcasttransaction');
    const interrupted = adapter.send(usdt);
    await held.reached;
    held.fail();
    await expect(interrupted).rejects.toThrow(/503/);
    const stored = (await h.context.db.chainSend.findUnique({ where: { id: usdt.id } }))!;
    expect(stored.status).toBe('signed');
    // Still valid: a retry broadcasts the stored transaction itself.
    const retried = await adapter.send(usdt);
    expect(retried.txHash).toBe(stored.txHash);

    const late = transfer('trx', '5');
    const held2 = fake.hold('tron /wallet/broadcasttransaction');
    const interrupted2 = adapter.send(late);
    await held2.reached;
    held2.fail();
    await expect(interrupted2).rejects.toThrow(/503/);
    const old = (await h.context.db.chainSend.findUnique({ where: { id: late.id } }))!.txHash;
    fake.tron.advance(45);
    const replaced = await adapter.send(late);
    expect(replaced.txHash).not.toBe(old);
    expect(await h.context.db.chainSend.findUnique({ where: { id: late.id } })).toMatchObject({ txHash: replaced.txHash, previousTxHashes: [old], status: 'sent' });
    expect(await adapter.send(late)).toEqual(replaced);
    expect(fake.tron.broadcasts.filter((b) => b.txID === old || b.txID === replaced.txHash).map((b) => b.txID)).toEqual([replaced.txHash]);
  });

  it('answers confirmed TRX and USDT balances of watched addresses for the custody check', async () => {
    const to = await allocate();
    fake.tron.addBlock([
      { asset: 'usdt', to, units: 3_250_000n },
      { asset: 'trx', to, units: 2_000_000n },
    ]);
    expect(await adapter.watchedBalances([to])).toEqual([
      { address: to, asset: 'trx', amount: '2' },
      { address: to, asset: 'trc20usdt', amount: '3.25' },
    ]);
  });

  it('refuses an xpub the signer does not own, and a usdtContract that is no contract', async () => {
    const other = Signer.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
    expect(() => tronAdapter('tron', config({ xpub: other.accountXpub('tron', false) }), h.context)).toThrow(/not the signer's Tron account/);
    await expect(tronAdapter('tron', config({ usdtContract: randomTronAddress() }), h.context).connect()).rejects.toThrow(/is no contract/);
  });
});
