// The EVM adapter on its own against a real anvil node: derivation (cross-checked with viem's own HD accounts), the
// node and token checks at start, the block scan (native and ERC-20, several logs in one transaction, confirmations,
// reverted transfers), reorgs (a transfer back in another block, one dropped for good), sends from the hot wallet
// (nonces under concurrency, once per id, fees, outcomes, a stuck one replaced), hostile sends, custody balances.
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, erc20Abi, getAddress, parseEther, parseTransaction, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OutgoingTransfer } from '../../src/chains/adapter.ts';
import { evmChainSchema } from '../../src/chains/config.ts';
import { EvmAdapter, evmAdapter, type EvmState } from '../../src/chains/evm/adapter.ts';
import { HOT_WALLET, Signer } from '../../src/chains/signer.ts';
import { Money } from '../../src/domain/money.ts';
import { historyOf, openHarness, type Harness } from '../support/chain-harness.ts';
import { TEST_MNEMONIC, testSigner, testXpub } from '../support/chains.ts';
import { startAnvil, testToken, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';

const CONFIRMATIONS = 3;

describe.runIf(ANVIL)('the EVM adapter on anvil', () => {
  let anvil: Anvil;
  let h: Harness;
  let token: Address;
  let adapter: EvmAdapter;
  const { abi } = testToken();
  const config = (extra: Record<string, unknown> = {}) =>
    evmChainSchema.parse({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      xpub: testXpub('ethereum', false),
      tokens: { usdterc20: token },
      confirmations: CONFIRMATIONS,
      pollMs: 100,
      replaceAfterBlocks: 3,
      ...extra,
    });
  const allocate = async (paymentCurrency: 'eth' | 'usdterc20' = 'eth') =>
    (await adapter.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency })).address as Address;
  const scan = () => h.scan<EvmState>(adapter);
  const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;
  const withdrawal = (asset: 'eth' | 'usdterc20', amount: string, to: string = mnemonicToAccount(TEST_MNEMONIC, { addressIndex: 999 }).address): OutgoingTransfer => ({
    id: randomUUID(),
    purpose: 'withdrawal',
    asset,
    to,
    tag: null,
    amount: new Money(amount),
  });

  beforeAll(async () => {
    anvil = await startAnvil();
    token = await anvil.deployToken(6);
    h = await openHarness();
    adapter = evmAdapter('ethereum', config(), h.context) as EvmAdapter;
    await adapter.connect();
    await scan();
  });
  afterAll(async () => {
    await h?.close();
    await anvil?.stop();
  });
  beforeEach(() => {
    h.reports.length = 0;
    h.outgoing.length = 0;
  });

  it("hands out m/44'/60'/0'/0/i of the signer's mnemonic (BSC: account 1'), derived from the xpub alone, each index once", async () => {
    const first = await allocate();
    const second = await allocate('usdterc20');
    const rows = await h.context.db.derivedAddress.findMany({ where: { network: 'ethereum' }, orderBy: { index: 'asc' } });
    expect(rows.map((r) => r.address)).toEqual([first, second]);
    expect(first).toBe(mnemonicToAccount(TEST_MNEMONIC, { addressIndex: rows[0]!.index }).address);
    expect(second).toBe(mnemonicToAccount(TEST_MNEMONIC, { addressIndex: rows[1]!.index }).address);
    const bsc = evmAdapter('bsc', config({ xpub: testXpub('bsc', false), tokens: {} }), h.context) as EvmAdapter;
    expect(bsc.depositAddress(0)).toBe(mnemonicToAccount(TEST_MNEMONIC, { accountIndex: 1, addressIndex: 0 }).address);
    expect(bsc.depositAddress(0)).not.toBe(adapter.depositAddress(0));
    expect(hot).toBe(mnemonicToAccount(TEST_MNEMONIC, { changeIndex: 1, addressIndex: 0 }).address);
  });

  it('refuses a node on another chain, a token that is no contract or has other decimals, an xpub the signer does not own', async () => {
    await expect(evmAdapter('ethereum', config({ chainId: 1 }), h.context).connect()).rejects.toThrow(/the node is on chain 31337, CHAINS_FILE says 1/);
    await expect(evmAdapter('ethereum', config({ tokens: { usdc: hot } }), h.context).connect()).rejects.toThrow(/tokens.usdc: .* is no contract/);
    const eighteen = await anvil.deployToken(18);
    await expect(evmAdapter('ethereum', config({ tokens: { usdc: eighteen } }), h.context).connect()).rejects.toThrow(/has 18 decimals, usdc has 6/);
    expect(() => evmAdapter('bsc', config({ xpub: testXpub('bsc', false) }), h.context)).toThrow(/tokens.usdterc20 is a currency of ethereum/);
    const other = Signer.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
    expect(() => evmAdapter('ethereum', config({ xpub: other.accountXpub('ethereum', false) }), h.context)).toThrow(/not the signer's account/);
    await expect(adapter.allocateAddress({ companyId: randomUUID(), ownerId: randomUUID(), paymentCurrency: 'usdc' })).rejects.toThrow(/no contract is configured for it/);
  });

  it('finds native and token payments in blocks, several logs of one transaction apart, and reports them as they deepen until final', async () => {
    const [a, b, c] = [await allocate(), await allocate('usdterc20'), await allocate('usdterc20')];
    const eth = await anvil.pay(a, '1.000000000000000001');
    const many = await anvil.call(token, abi, 'transferMany', [
      [b, c, b],
      [1_500_000n, 2_000_000n, 250_000n],
    ]);
    await anvil.mine(1);
    await scan();
    expect(h.reports.filter((r) => r.txHash === eth)).toEqual([
      expect.objectContaining({ network: 'ethereum', asset: 'eth', outputIndex: 0, to: a, from: anvil.payers[0]!.address, confirmations: 1, dropped: false }),
    ]);
    expect(h.reports.find((r) => r.txHash === eth)!.amount.toFixed()).toBe('1.000000000000000001');
    const tokens = h.reports.filter((r) => r.txHash === many).map((r) => [r.asset, r.outputIndex, r.to, r.amount.toFixed()]);
    expect(tokens).toEqual([
      ['usdterc20', 1, b, '1.5'],
      ['usdterc20', 2, c, '2'],
      ['usdterc20', 3, b, '0.25'],
    ]);
    await anvil.mine(1);
    await scan();
    await anvil.mine(5);
    await scan();
    await anvil.mine(1);
    await scan();
    expect(historyOf(h.reports, eth)).toEqual([
      [1, false],
      [2, false],
      [7, false],
    ]);
  });

  it('does not report a transfer that moved nothing: a reverted call, a zero-value one, a token it does not watch', async () => {
    const to = await allocate('usdterc20');
    const other = await anvil.deployToken(6);
    // More than the payer holds: the transfer reverts (mined, failed), no log.
    const reverted = await anvil.call(token, abi, 'transfer', [to, 10n ** 30n], 1, { gas: 100_000n });
    const zero = await anvil.call(token, abi, 'transfer', [to, 0n], 2);
    const elsewhere = await anvil.call(other, abi, 'transfer', [to, 5_000_000n], 3);
    await anvil.mine(1);
    await scan();
    expect((await anvil.public.getTransactionReceipt({ hash: reverted })).status).toBe('reverted');
    expect(h.reports.filter((r) => [reverted, zero, elsewhere].includes(r.txHash as Hex))).toEqual([]);
  });

  it('reports a payment to an address handed out while a scan was under way, in a block it then reads (the cursor passes it)', async () => {
    const head = adapter.head.bind(adapter);
    let to: Address | undefined;
    let paid: Hex | undefined;
    // The scan has started; the address is handed out and paid in a new block before the scan reads the head.
    adapter.head = async () => {
      Reflect.deleteProperty(adapter, 'head');
      to = await allocate();
      paid = await anvil.pay(to, '0.5');
      await anvil.mine(1);
      return head();
    };
    try {
      await scan();
    } finally {
      Reflect.deleteProperty(adapter, 'head');
    }
    expect(paid).toBeDefined();
    expect(h.reports.filter((r) => r.txHash === paid).map((r) => [r.to, r.amount.toFixed()])).toEqual([[to, '0.5']]);
  });

  it('a reorg before a transfer is final: back to unseen, reported again from its new block; dropped once its nonce is used elsewhere', async () => {
    const [back, lost] = [await allocate(), await allocate()];
    const payer = anvil.payers[1]!;
    const nonce = await anvil.public.getTransactionCount({ address: payer.address });
    const fees = { chainId: anvil.chainId, type: 'eip1559' as const, gas: 21_000n, maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
    const rawBack = await payer.signTransaction({ ...fees, nonce, to: back, value: parseEther('0.5') });
    const rawLost = await anvil.payers[2]!.signTransaction({ ...fees, nonce: await anvil.public.getTransactionCount({ address: anvil.payers[2]!.address }), to: lost, value: parseEther('0.25') });
    const hashBack = await anvil.public.sendRawTransaction({ serializedTransaction: rawBack });
    const hashLost = await anvil.public.sendRawTransaction({ serializedTransaction: rawLost });
    await anvil.mine(1);
    await scan();
    expect(historyOf(h.reports, hashBack)).toEqual([[1, false]]);
    // Two blocks replaced: the first transaction comes back one block later, the second does not come back.
    await anvil.test.request({ method: 'anvil_reorg', params: [1, [[rawBack, 0]]] } as never);
    await anvil.mine(1);
    await scan(); // sees the fork, goes back
    await scan(); // reads the new blocks
    const again = h.reports.filter((r) => r.txHash === hashBack).at(-1)!;
    expect(again.confirmations).toBe(2);
    expect(h.reports.filter((r) => r.txHash === hashLost)).toEqual([expect.objectContaining({ confirmations: 1, dropped: false })]);
    // The payer of the lost one spends its nonce on something else: once that is as deep as a payment, it is dropped.
    await anvil.pay(anvil.payers[3]!.address, '0.01', 2);
    await anvil.mine(1);
    await scan();
    expect(h.reports.filter((r) => r.txHash === hashLost && r.dropped)).toEqual([]);
    await anvil.mine(CONFIRMATIONS);
    await scan();
    expect(h.reports.filter((r) => r.txHash === hashLost).at(-1)).toMatchObject({ confirmations: 0, dropped: true, blockNumber: null });
    await anvil.mine(2);
    await scan();
    expect(h.reports.filter((r) => r.txHash === hashLost && r.dropped)).toHaveLength(1);
  });

  it('resumes from its saved cursor: a scan repeated from an older state reports the same transfers again, and nothing else', async () => {
    const to = await allocate();
    const state = JSON.parse(JSON.stringify(await scan())) as EvmState;
    const paid = await anvil.pay(to, '0.125');
    await anvil.mine(2);
    const fresh = evmAdapter('ethereum', config(), h.context) as EvmAdapter;
    await fresh.scan(state);
    await fresh.scan(state);
    expect(historyOf(h.reports, paid)).toEqual([
      [2, false],
      [2, false],
    ]);
  });

  describe('sending from the hot wallet', () => {
    beforeAll(async () => {
      await anvil.pay(hot, '20');
      await anvil.call(token, abi, 'transfer', [hot, 500_000_000n]);
      await anvil.mine(1);
    });

    it('gives concurrent sends consecutive nonces, each id one transaction, and reports them final with their fee', async () => {
      const sends = [withdrawal('eth', '0.1'), withdrawal('eth', '0.2'), withdrawal('usdterc20', '12.5'), withdrawal('eth', '0.3'), withdrawal('usdterc20', '0.000001')];
      const first = await Promise.all(sends.map((s) => adapter.send(s)));
      const again = await Promise.all(sends.map((s) => adapter.send(s)));
      expect(again).toEqual(first);
      const rows = await h.context.db.chainSend.findMany({ where: { id: { in: sends.map((s) => s.id) } } });
      const nonces = rows.map((r) => Number(r.nonce)).sort((x, y) => x - y);
      expect(nonces).toEqual(Array.from({ length: 5 }, (_, i) => nonces[0]! + i));
      expect(rows.every((r) => r.status === 'sent' && r.fromAddress === hot)).toBe(true);
      const tokenSend = rows.find((r) => r.asset === 'usdterc20' && r.amount.toString() === '12.5')!;
      const decoded = parseTransaction(tokenSend.rawTx as Hex);
      expect(getAddress(decoded.to!)).toBe(getAddress(token));
      expect(decoded.data).toBe(encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [sends[2]!.to as Address, 12_500_000n] }));
      expect(decoded.type).toBe('eip1559');

      await anvil.mine(1);
      await scan();
      expect(h.outgoing).toEqual([]);
      await anvil.mine(CONFIRMATIONS - 1);
      await scan();
      expect(h.outgoing.map((o) => [o.id, o.outcome]).sort()).toEqual(sends.map((s) => [s.id, 'confirmed']).sort());
      const settled = await h.context.db.chainSend.findUniqueOrThrow({ where: { id: sends[0]!.id } });
      const receipt = await anvil.public.getTransactionReceipt({ hash: settled.txHash as Hex });
      expect(settled).toMatchObject({ status: 'confirmed', blockNumber: receipt.blockNumber });
      expect(settled.fee!.toString()).toBe(new Money((receipt.gasUsed * receipt.effectiveGasPrice).toString()).div('1e18').toFixed());
      expect(await anvil.public.getBalance({ address: sends[0]!.to as Address })).toBe(parseEther('0.6'));
    });

    it('replaces a send stuck behind a risen base fee with higher fees, and reports the one mined with the hash it had before', async () => {
      const send = withdrawal('eth', '0.05');
      const { txHash: first } = await adapter.send(send);
      const signed = parseTransaction((await h.context.db.chainSend.findUniqueOrThrow({ where: { id: send.id } })).rawTx as Hex);
      // The next blocks' base fee above what it offers: it waits in the pool.
      await anvil.test.request({ method: 'anvil_setNextBlockBaseFeePerGas', params: [`0x${(signed.maxFeePerGas! * 2n).toString(16)}`] } as never);
      await anvil.mine(1);
      await scan();
      await anvil.mine(3);
      await scan();
      const replaced = await h.context.db.chainSend.findUniqueOrThrow({ where: { id: send.id } });
      expect(replaced.previousTxHashes).toEqual([first]);
      expect(replaced.txHash).not.toBe(first);
      const bumped = parseTransaction(replaced.rawTx as Hex);
      expect(bumped.nonce).toBe(signed.nonce);
      expect(bumped.maxFeePerGas! * 4n).toBeGreaterThanOrEqual(signed.maxFeePerGas! * 5n);
      expect(bumped.maxPriorityFeePerGas! * 4n).toBeGreaterThanOrEqual(signed.maxPriorityFeePerGas! * 5n);
      await anvil.mine(CONFIRMATIONS);
      await scan();
      expect(h.outgoing).toEqual([{ network: 'ethereum', purpose: 'withdrawal', id: send.id, txHash: replaced.txHash, earlier: [first], outcome: 'confirmed' }]);
      // The same transfer again answers the replacement, without a new transaction.
      expect(await adapter.send(send)).toEqual({ txHash: replaced.txHash });
    });

    it('does not replace past the fee cap', async () => {
      // A cap between the base fee and what the node suggests: the send offers exactly the cap.
      const cap = ((await anvil.public.getBlock()).baseFeePerGas! * 3n) / 2n;
      const capped = evmAdapter('ethereum', config({ maxFeeGwei: new Money(cap.toString()).div(1e9).toFixed() }), h.context) as EvmAdapter;
      let state = JSON.parse(JSON.stringify(await scan())) as EvmState;
      const send = withdrawal('eth', '0.01');
      const { txHash } = await capped.send(send);
      const signed = parseTransaction((await h.context.db.chainSend.findUniqueOrThrow({ where: { id: send.id } })).rawTx as Hex);
      expect(signed.maxFeePerGas).toBe(cap);
      await anvil.test.request({ method: 'anvil_setNextBlockBaseFeePerGas', params: [`0x${(cap * 2n).toString(16)}`] } as never);
      for (let i = 0; i < 5; i++) {
        await anvil.mine(1);
        state = await capped.scan(state);
      }
      expect(await h.context.db.chainSend.findUniqueOrThrow({ where: { id: send.id } })).toMatchObject({ txHash, previousTxHashes: [] });
      // The node let it go while it could not pay the base fee; with the base fee back down, the next scan offers
      // it again, as it was, and it is mined.
      await anvil.test.request({ method: 'anvil_setNextBlockBaseFeePerGas', params: [`0x${(cap / 2n).toString(16)}`] } as never);
      await anvil.mine(1);
      state = await capped.scan(state);
      await anvil.mine(CONFIRMATIONS);
      await capped.scan(state);
      expect(h.outgoing.filter((o) => o.id === send.id)).toEqual([expect.objectContaining({ txHash, earlier: [], outcome: 'confirmed' })]);
      await scan();
    });

    it('refuses hostile sends before signing: not an address, a tag, more decimals than the coin, more than the hot wallet holds', async () => {
      await expect(adapter.send(withdrawal('eth', '1', '0xnot-an-address'))).rejects.toThrow(/is not an address of ethereum/);
      await expect(adapter.send({ ...withdrawal('eth', '1'), tag: '7' })).rejects.toThrow(/takes no tag/);
      await expect(adapter.send(withdrawal('usdterc20', '0.0000001'))).rejects.toThrow(/more than 6 decimal places/);
      await expect(adapter.send(withdrawal('eth', '100000'))).rejects.toThrow(/hot wallet .* is short of .* eth/);
      await expect(adapter.send(withdrawal('usdterc20', '100000000'))).rejects.toThrow(/short of .* usdterc20/);
      expect(await h.context.db.chainSend.count({ where: { amount: { in: [new Money('100000'), new Money('100000000')] } } })).toBe(0);
      const watchOnly = evmAdapter('ethereum', config(), { ...h.context, signer: null });
      await expect(watchOnly.send(withdrawal('eth', '0.01'))).rejects.toThrow(/holds no signer/);
    });
  });

  it('answers balances as deep as a payment needs for the custody check', async () => {
    const to = await allocate('usdterc20');
    await anvil.pay(to, '0.75');
    await anvil.call(token, abi, 'transfer', [to, 3_250_000n]);
    await anvil.mine(1);
    expect(await adapter.watchedBalances([to])).toEqual([
      { address: to, asset: 'eth', amount: '0' },
      { address: to, asset: 'usdterc20', amount: '0' },
    ]);
    await anvil.mine(CONFIRMATIONS - 1);
    expect(await adapter.watchedBalances([to])).toEqual([
      { address: to, asset: 'eth', amount: '0.75' },
      { address: to, asset: 'usdterc20', amount: '3.25' },
    ]);
  });
});
