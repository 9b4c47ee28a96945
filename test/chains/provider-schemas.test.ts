// The fake providers' answers (test/fixtures/chains/, filled by test/support/fake-chains/) read by the providers' own
// client libraries, whose parsers check every answer against their schemas: toncenter's through @ton/ton's HttpApi
// (zod), Solana's through @solana/web3.js's Connection (superstruct). An answer of the wrong shape fails here, so the
// adapters are tested against the shapes the real APIs have. (java-tron has no client with a schema: its fixtures are
// the captures of its own documentation, test/fixtures/chains/README.md.)
import { Address } from '@ton/core';
import { HttpApi } from '@ton/ton';
import { Connection, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomSolanaKey, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';

describe("the fake providers' answers pass their own clients' schemas", () => {
  let fake: FakeChains;
  beforeAll(async () => {
    fake = await startFakeChains();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('toncenter v2 (@ton/ton HttpApi, zod): transactions with text and raw bodies, a bounce, an outgoing one; the account in each state; the error object', async () => {
    const api = new HttpApi(`${fake.tonUrl}/jsonRPC`, { timeout: 5_000 });
    const wallet = Address.parse(fake.ton.wallet);
    fake.ton.add({ amount: '1.5', comment: '12345' });
    fake.ton.add({ amount: '2', comment: null });
    fake.ton.addOutgoing();
    fake.ton.state = 'uninitialized';
    const bounced = fake.ton.add({ amount: '3', comment: '777', bounceable: true });
    try {
      const info = await api.getAddressInformation(wallet);
      expect(info.state).toBe('uninitialized');
      const txs = await api.getTransactions(wallet, { limit: 10, archival: true });
      expect(txs).toHaveLength(5);
      const bounce = txs.find((t) => t.transaction_id.hash === bounced)!;
      expect(bounce.out_msgs).toEqual([expect.objectContaining({ destination: bounce.in_msg!.source, value: String(3_000_000_000n - 2_666_690n) })]);
      expect(txs.find((t) => t.in_msg?.msg_data['@type'] === 'msg.dataText')).toBeDefined();
      expect(txs.find((t) => t.in_msg?.msg_data['@type'] === 'msg.dataRaw')).toBeDefined();
    } finally {
      fake.ton.state = 'active';
    }
    expect((await api.getAddressInformation(wallet)).state).toBe('active');
    fake.ton.erroring = true;
    try {
      await expect(api.getAddressInformation(wallet)).rejects.toThrow(/Received error: .*"ok":false/);
    } finally {
      fake.ton.erroring = false;
    }
  });

  it('Solana JSON-RPC (@solana/web3.js Connection, superstruct): legacy and v0 transactions with loaded addresses, signatures, statuses, balance, slot', async () => {
    const connection = new Connection(fake.solanaUrl, 'confirmed');
    const reference = randomSolanaKey();
    const legacy = fake.solana.add({ amount: '1.5', references: [reference] });
    const v0 = fake.solana.add({ amount: '2', references: [reference], lookup: { wallet: true, references: true } });
    const failed = fake.solana.add({ amount: '1', references: [], failed: true });

    const read = await connection.getTransaction(legacy, { maxSupportedTransactionVersion: 0 });
    expect(read!.version).toBe('legacy');
    const loaded = await connection.getTransaction(v0, { maxSupportedTransactionVersion: 0 });
    expect(loaded!.version).toBe(0);
    expect(loaded!.meta!.loadedAddresses!.writable.map(String)).toEqual([fake.solana.wallet]);
    expect(loaded!.meta!.loadedAddresses!.readonly.map(String)).toEqual([reference]);
    expect(loaded!.transaction.message.addressTableLookups).toHaveLength(1);
    expect(loaded!.meta!.postBalances).toHaveLength(loaded!.transaction.message.staticAccountKeys.length + 2);

    const signatures = await connection.getSignaturesForAddress(new PublicKey(fake.solana.wallet), { limit: 3 });
    expect(signatures.map((s) => s.signature)).toEqual([failed, v0, legacy]);
    expect(signatures[0]!.err).not.toBeNull();
    const statuses = await connection.getSignatureStatuses([legacy, randomSolanaKey()], { searchTransactionHistory: true });
    expect(statuses.value[0]!.confirmationStatus).toBe('confirmed');
    expect(statuses.value[1]).toBeNull();
    fake.solana.finalize();
    expect(await connection.getBalance(new PublicKey(fake.solana.wallet), 'finalized')).toBe(4_500_000_000);
    expect(await connection.getSlot()).toBe(fake.solana.slot);
  });
});
