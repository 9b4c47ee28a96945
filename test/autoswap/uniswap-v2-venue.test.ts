// The Uniswap V2 venue against the real Uniswap V2 contracts on anvil (deployed from the npm packages' artifacts:
// test/support/uniswap.ts): ether and token swaps fill with what the pool's reserves give, exactly, in the hot
// wallet's balance, the receipt and the answer; a minimum the pool cannot give is refused before anything is signed;
// a pool that moves between the check and the block, or a deadline that passes, ends failed on chain; a repeated
// submit (also by a new venue over a new adapter, as after a crash) answers the one stored swap, never a second.
import { randomUUID } from 'node:crypto';
import { createWalletClient, decodeFunctionData, getAddress, http, maxUint256, parseEther, parseEventLogs, parseTransaction, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniswapV2Venue, type UniswapV2Venue } from '../../src/autoswap/venues/uniswap-v2.ts';
import { routerAbi } from '../../src/autoswap/venues/uniswap-v2/abi.ts';
import { poolFeeOf } from '../../src/autoswap/venues/uniswap-v2/fill.ts';
import type { SwapOrder } from '../../src/autoswap/venue.ts';
import { evmChainSchema, type EvmChainConfig } from '../../src/chains/config.ts';
import { EvmAdapter, evmAdapter } from '../../src/chains/evm/adapter.ts';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { Money } from '../../src/domain/money.ts';
import { startAnvil, testToken, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { openHarness, type Harness } from '../support/chain-harness.ts';
import { testSigner, testXpub } from '../support/chains.ts';
import { amountOut, deployUniswap, PAIR, type Uniswap } from '../support/uniswap.ts';

const CONFIRMATIONS = 2;
const ETH_POOL = parseEther('100');
const USDT_POOL = 300_000_000000n;

describe.runIf(ANVIL)('the Uniswap V2 venue on anvil', () => {
  let anvil: Anvil;
  let h: Harness;
  let uni: Uniswap;
  let usdt: Address;
  let usdc: Address;
  let chains: { ethereum: EvmChainConfig };
  let adapter: EvmAdapter;
  let venue: UniswapV2Venue;
  const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;
  const { abi: tokenAbi } = testToken();

  /** The venue's SWAP_CONFIG entry, without `venue` (what the autoswap venue registry hands its factory). */
  const options = (extra: Record<string, unknown> = {}) => ({
    ethereum: {
      router: uni.router,
      weth: uni.weth,
      pairs: [{ from: 'eth', to: 'usdterc20', minimum: '0.001' }, { from: 'usdc', to: 'usdterc20' }, { from: 'usdterc20', to: 'usdc' }],
      confirmations: CONFIRMATIONS,
      ...extra,
    },
  });
  const newAdapter = (tokens?: Record<string, string>) => evmAdapter('ethereum', tokens ? { ...chains.ethereum, tokens } : chains.ethereum, h.context) as EvmAdapter;
  const only = (node: EvmAdapter | null) => ({ liveEvm: (network: string) => (network === 'ethereum' ? node : null) });
  const newVenue = (node: EvmAdapter, extra: Record<string, unknown> = {}) => uniswapV2Venue(options(extra), { chains: only(node) });
  const order = (over: Partial<SwapOrder> = {}): SwapOrder => ({
    swapId: randomUUID(),
    mode: 'live',
    from: 'eth',
    to: 'usdterc20',
    amount: new Money('1'),
    minOut: new Money('1'),
    deadline: new Date(Date.now() + 600_000),
    ...over,
  });
  const tokenBalance = (token: Address, holder: Address = hot) => anvil.public.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [holder] }) as Promise<bigint>;
  const sends = (swapId: string) => h.context.db.chainSend.findMany({ where: { id: { startsWith: `autoswap:${swapId}` } }, orderBy: { nonce: 'asc' } });
  /** The pair's Swap events paying the hot wallet, in every block so far. */
  const swapsToHot = async (a: Address, b: Address) => {
    const logs = await anvil.public.getLogs({ address: await uni.pair(a, b), fromBlock: 0n, toBlock: 'latest' });
    return parseEventLogs({ abi: PAIR.abi, logs, eventName: 'Swap' }).filter((l) => getAddress((l.args as { to: Address }).to) === hot);
  };
  const until = async (o: SwapOrder, ref: string | null, state: string) => {
    for (let i = 0; i < 5; i++) {
      const s = await venue.status(o, ref);
      if (s.state === state) return s;
      await anvil.mine(1);
    }
    throw new Error(`${o.swapId} never reached ${state}`);
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    usdt = getAddress(await anvil.deployToken(6, 10_000_000_000000n));
    usdc = getAddress(await anvil.deployToken(6, 10_000_000_000000n));
    uni = await deployUniswap(anvil);
    await uni.addLiquidityEth(usdt, USDT_POOL, ETH_POOL);
    await uni.addLiquidity(usdc, usdt, 1_000_000_000000n, 1_000_000_000000n);
    // The hot wallet holds what the swaps sell (in production: consolidated deposits).
    await anvil.pay(hot, '50');
    await anvil.call(usdc, tokenAbi, 'transfer', [hot, 10_000_000000n]);
    await anvil.mine(1);
    h = await openHarness();
    chains = {
      ethereum: evmChainSchema.parse({
        rpcUrl: anvil.rpcUrl,
        chainId: anvil.chainId,
        xpub: testXpub('ethereum', false),
        tokens: { usdterc20: usdt, usdc },
        confirmations: 3,
        pollMs: 100,
      }),
    };
    adapter = newAdapter();
    await adapter.connect();
    venue = newVenue(adapter);
  });
  afterAll(async () => {
    await h?.close();
    await anvil?.stop();
  });

  it('supports its configured pairs in live mode only, with their minimums; its SWAP_CONFIG entry is checked against the chains', () => {
    expect(venue.name).toBe('uniswap-v2');
    expect(venue.supports('live', 'eth', 'usdterc20')).toBe(true);
    expect(venue.supports('live', 'usdc', 'usdterc20')).toBe(true);
    expect(venue.supports('test', 'eth', 'usdterc20')).toBe(false);
    expect(venue.supports('live', 'usdterc20', 'eth')).toBe(false);
    expect(venue.supports('live', 'btc', 'usdterc20')).toBe(false);
    expect(venue.minimum('eth', 'usdterc20')!.toFixed()).toBe('0.001');
    expect(venue.minimum('usdc', 'usdterc20')).toBeNull();
    const bad = (entry: Record<string, unknown>, node: EvmAdapter | null = adapter) => () => uniswapV2Venue(entry, { chains: only(node) });
    expect(bad(options({ router: '0x1234' }))).toThrow(/venue uniswap-v2:\n  ethereum\.router: must be a 0x address/);
    expect(bad(options({ gasLimit: 10 }))).toThrow(/ethereum\.gasLimit/);
    expect(bad(options({ surprise: 1 }))).toThrow(/ethereum: Unrecognized key/);
    expect(bad({ ...options(), polygon: {} })).toThrow(/\(entry\): Unrecognized key: "polygon"/);
    expect(bad(options({ pairs: [{ from: 'btc', to: 'usdterc20' }] }))).toThrow(/ethereum\.pairs\.0\.from: btc is a currency of bitcoin, not of ethereum/);
    expect(bad(options({ pairs: [{ from: 'usdterc20', to: 'eth' }] }))).toThrow(/pairs\.0\.to: swaps to eth are not supported/);
    expect(bad(options({ pairs: [{ from: 'eth', to: 'usdterc20' }, { from: 'eth', to: 'usdterc20' }] }))).toThrow(/pairs\.1: eth\/usdterc20 is listed twice/);
    expect(bad(options({ pairs: [{ from: 'eth', to: 'usdterc20', minimum: '-1' }] }))).toThrow(/pairs\.0\.minimum: must be greater than 0/);
    expect(bad(options(), newAdapter({ usdterc20: usdt }))).toThrow(/pairs\.1\.from: usdc has no contract in CHAINS_FILE \(ethereum\.tokens\.usdc\)/);
    expect(bad(options(), null)).toThrow(/ethereum: ethereum has no node in CHAINS_FILE/);
  });

  it('swaps ether for tokens through swapExactETHForTokens: the fill is what the reserves give, in the receipt, the hot wallet and the answer alike', async () => {
    const [ethBefore, usdtBefore] = await uni.reserves(uni.weth, usdt);
    const expected = amountOut(parseEther('1'), ethBefore, usdtBefore);
    const held = await tokenBalance(usdt);
    const o = order({ minOut: new Money(expected.toString()).div(1e6).times('0.99') });
    const submitted = await venue.submit(o);
    expect(submitted.state).toBe('pending');
    const [row] = await sends(o.swapId);
    expect(row).toMatchObject({ purpose: 'autoswap', asset: 'eth', fromAddress: hot, toAddress: uni.router, status: 'sent' });
    expect(submitted).toEqual({ state: 'pending', ref: row!.txHash });
    // The transaction: the router's swapExactETHForTokens, amountOutMin in base units (rounded up), the order's deadline.
    const tx = await anvil.public.getTransaction({ hash: row!.txHash as Hex });
    expect(tx.value).toBe(parseEther('1'));
    const call = decodeFunctionData({ abi: routerAbi, data: tx.input });
    expect(call.functionName).toBe('swapExactETHForTokens');
    const minUnits = BigInt(o.minOut.times(1e6).ceil().toFixed());
    expect(call.args).toEqual([minUnits, [uni.weth, usdt], hot, BigInt(Math.floor(o.deadline.getTime() / 1000))]);

    await anvil.mine(1);
    expect(await venue.status(o, submitted.state === 'pending' ? submitted.ref : null)).toEqual({ state: 'pending', ref: row!.txHash });
    await anvil.mine(1);
    const filled = await venue.status(o, row!.txHash);
    expect(filled).toMatchObject({ state: 'filled' });
    if (filled.state !== 'filled') return;
    const received = (await tokenBalance(usdt)) - held;
    expect(received).toBe(expected);
    expect(filled.toAmount.toFixed()).toBe(new Money(expected.toString()).div(1e6).toFixed());
    expect(filled.venueFee.toFixed()).toBe(new Money(poolFeeOf(expected).toString()).div(1e6).toFixed());
    expect(filled.ref).toBe(row!.txHash);
    expect(await uni.reserves(uni.weth, usdt)).toEqual([ethBefore + parseEther('1'), usdtBefore - expected]);
    // Gas is the swap's cost in ether, apart from the fill.
    const receipt = await anvil.public.getTransactionReceipt({ hash: row!.txHash as Hex });
    const fee = await venue.networkFee(o);
    expect([fee!.currency, fee!.amount.toFixed()]).toEqual(['eth', new Money((receipt.gasUsed * receipt.effectiveGasPrice).toString()).div(1e18).toFixed()]);
    // Submitted again: the same transaction's outcome, nothing new signed.
    expect(await venue.submit(o)).toEqual(filled);
    expect(await sends(o.swapId)).toHaveLength(1);
    // The chains watcher follows it like any send of ours: final at the chain's depth, its fee recorded.
    await anvil.mine(1);
    await h.scan(adapter);
    expect(await sends(o.swapId)).toEqual([expect.objectContaining({ status: 'confirmed', txHash: row!.txHash })]);
    expect((await sends(o.swapId))[0]!.fee!.toFixed()).toBe(fee!.amount.toFixed());
    // Autoswap is a declared outgoing purpose: the adapter reports the send's outcome as it does for withdrawals and
    // refunds; the registry hands it to no listener, autoswap being self-followed (its venue's status() read the fill
    // above; test/architecture/declarations.test.ts).
    expect(h.outgoing).toEqual([expect.objectContaining({ purpose: 'autoswap', outcome: 'confirmed', id: `autoswap:${o.swapId}` })]);
  });

  it('refuses, before signing anything, a minimum the pool cannot give, an order below the minimum, a pair it does not have, test mode', async () => {
    const [ethReserve, usdtReserve] = await uni.reserves(uni.weth, usdt);
    const gives = amountOut(parseEther('1'), ethReserve, usdtReserve);
    const nonce = await anvil.public.getTransactionCount({ address: hot, blockTag: 'pending' });
    const greedy = order({ minOut: new Money((gives + 1n).toString()).div(1e6) });
    const refused = await venue.submit(greedy);
    expect(refused).toMatchObject({ state: 'failed', ref: null, retryable: false });
    expect(refused.state === 'failed' && refused.reason).toBe(
      `the pool would give ${new Money(gives.toString()).div(1e6).toFixed()} usdterc20 for 1 eth, less than the minimum ${new Money((gives + 1n).toString()).div(1e6).toFixed()} (slippage)`,
    );
    expect(await venue.submit(order({ amount: new Money('0.0001') }))).toMatchObject({ state: 'failed', reason: "0.0001 eth is below this venue's minimum of 0.001", retryable: false });
    expect(await venue.submit(order({ from: 'usdterc20', to: 'eth' }))).toMatchObject({ state: 'failed', retryable: false });
    expect(await venue.submit(order({ mode: 'test' }))).toMatchObject({ state: 'failed', retryable: false });
    expect(await venue.submit(order({ minOut: new Money(0) }))).toMatchObject({ state: 'failed', retryable: false });
    expect(await venue.submit(order({ deadline: new Date(Date.now() - 60_000) }))).toMatchObject({ state: 'failed', reason: 'its deadline passed before it was sent', retryable: true });
    expect(await venue.status(greedy, null)).toMatchObject({ state: 'failed', retryable: true });
    expect(await anvil.public.getTransactionCount({ address: hot, blockTag: 'pending' })).toBe(nonce);
    expect(await h.context.db.chainSend.count({ where: { id: { in: [`autoswap:${greedy.swapId}`] } } })).toBe(0);
  });

  it('ends failed on chain (INSUFFICIENT_OUTPUT_AMOUNT), not retryable, when the pool moves between the check and the block', async () => {
    const [ethReserve, usdtReserve] = await uni.reserves(uni.weth, usdt);
    const exact = amountOut(parseEther('1'), ethReserve, usdtReserve);
    const held = await tokenBalance(usdt);
    const swapsBefore = (await swapsToHot(uni.weth, usdt)).length;
    const o = order({ minOut: new Money(exact.toString()).div(1e6) });
    const submitted = await venue.submit(o);
    expect(submitted.state).toBe('pending');
    // Another trader's swap, paying a higher tip, goes first in the same block and moves the price.
    await anvil.call(uni.router, routerAbi as never, 'swapExactETHForTokens', [0n, [uni.weth, usdt], anvil.payers[1]!.address, maxUint256], 1, {
      value: parseEther('5'),
      gas: 300_000n,
      maxFeePerGas: parseEther('0.0000001'),
      maxPriorityFeePerGas: parseEther('0.00000005'),
    } as never);
    await anvil.mine(1);
    const failed = await until(o, null, 'failed');
    expect(failed).toMatchObject({ state: 'failed', retryable: false, ref: (await sends(o.swapId))[0]!.txHash });
    expect(failed.state === 'failed' && failed.reason).toMatch(/reverted on chain \(its gas is spent\): UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT/);
    expect(await tokenBalance(usdt)).toBe(held);
    expect((await swapsToHot(uni.weth, usdt)).length).toBe(swapsBefore);
    expect((await venue.networkFee(o))!.amount.gt(0)).toBe(true);
  });

  it('ends failed on chain (EXPIRED) when it is mined after its deadline', async () => {
    const latest = await anvil.public.getBlock({ blockTag: 'latest' });
    const o = order({ deadline: new Date((Number(latest.timestamp) + 30) * 1000) });
    expect((await venue.submit(o)).state).toBe('pending');
    await anvil.test.setNextBlockTimestamp({ timestamp: latest.timestamp + 120n });
    await anvil.mine(1);
    const failed = await until(o, null, 'failed');
    expect(failed).toMatchObject({ state: 'failed', retryable: false });
    expect(failed.state === 'failed' && failed.reason).toMatch(/UniswapV2Router: EXPIRED/);
  });

  it('swaps tokens for tokens through swapExactTokensForTokens, approving the router first once, in nonce order', async () => {
    const [usdcBefore, usdtBefore] = await uni.reserves(usdc, usdt);
    const amount = 2_500_000000n;
    const expected = amountOut(amount, usdcBefore, usdtBefore);
    const [heldUsdc, heldUsdt] = [await tokenBalance(usdc), await tokenBalance(usdt)];
    const o = order({ from: 'usdc', to: 'usdterc20', amount: new Money('2500'), minOut: new Money('2400') });
    expect((await venue.submit(o)).state).toBe('pending');
    const [approve, swap] = await sends(o.swapId);
    expect(approve).toMatchObject({ id: `autoswap:${o.swapId}:approve`, asset: 'usdc', toAddress: usdc, purpose: 'autoswap' });
    expect(swap).toMatchObject({ id: `autoswap:${o.swapId}`, asset: 'usdc', toAddress: uni.router });
    expect(BigInt(swap!.nonce!)).toBe(BigInt(approve!.nonce!) + 1n);
    const call = decodeFunctionData({ abi: routerAbi, data: (await anvil.public.getTransaction({ hash: swap!.txHash as Hex })).input });
    expect(call.functionName).toBe('swapExactTokensForTokens');
    expect(call.args).toEqual([amount, 2_400_000000n, [usdc, usdt], hot, BigInt(Math.floor(o.deadline.getTime() / 1000))]);
    const filled = await until(o, null, 'filled');
    expect(filled.state === 'filled' && filled.toAmount.toFixed()).toBe(new Money(expected.toString()).div(1e6).toFixed());
    expect([await tokenBalance(usdc), await tokenBalance(usdt)]).toEqual([heldUsdc - amount, heldUsdt + expected]);
    expect(await uni.reserves(usdc, usdt)).toEqual([usdcBefore + amount, usdtBefore - expected]);
    expect(await anvil.public.readContract({ address: usdc, abi: tokenAbi, functionName: 'allowance', args: [hot, uni.router] })).toBeGreaterThan(10n ** 70n);
    // The next one needs no approval: one transaction.
    const next = order({ from: 'usdc', to: 'usdterc20', amount: new Money('100'), minOut: new Money('90') });
    expect((await venue.submit(next)).state).toBe('pending');
    expect(await sends(next.swapId)).toHaveLength(1);
    expect((await until(next, null, 'filled')).state).toBe('filled');
  });

  it('sets a non-zero allowance to zero before approving the router (USDT refuses to change one non-zero allowance into another)', async () => {
    const hotWallet = createWalletClient({ account: testSigner.evmAccount('ethereum', HOT_WALLET), chain: foundry, transport: http(anvil.rpcUrl) });
    await hotWallet.writeContract({ address: usdt, abi: tokenAbi, functionName: 'approve', args: [uni.router, 1n], chain: foundry, account: hotWallet.account });
    await anvil.mine(1);
    const o = order({ from: 'usdterc20', to: 'usdc', amount: new Money('10'), minOut: new Money('9') });
    expect((await venue.submit(o)).state).toBe('pending');
    const rows = await sends(o.swapId);
    expect(rows.map((r) => r.id)).toEqual([`autoswap:${o.swapId}:approve-reset`, `autoswap:${o.swapId}:approve`, `autoswap:${o.swapId}`]);
    const approvals = await Promise.all(rows.slice(0, 2).map(async (r) => decodeFunctionData({ abi: tokenAbi, data: (await anvil.public.getTransaction({ hash: r.txHash as Hex })).input }).args));
    expect(approvals).toEqual([
      [uni.router, 0n],
      [uni.router, maxUint256],
    ]);
    expect((await until(o, null, 'filled')).state).toBe('filled');
  });

  it('follows a swap the chains watcher replaced with higher fees (stuck behind a risen base fee) to its fill under the new hash', async () => {
    const watching = evmAdapter('ethereum', { ...chains.ethereum, replaceAfterBlocks: 3 }, h.context) as EvmAdapter;
    const following = newVenue(watching);
    await h.scan(watching);
    const o = order({ amount: new Money('0.1') });
    const submitted = await following.submit(o);
    const [stored] = await sends(o.swapId);
    expect(submitted).toEqual({ state: 'pending', ref: stored!.txHash });
    const signed = parseTransaction(stored!.rawTx as Hex);
    await anvil.test.request({ method: 'anvil_setNextBlockBaseFeePerGas', params: [`0x${(signed.maxFeePerGas! * 2n).toString(16)}`] } as never);
    await anvil.mine(1);
    await h.scan(watching);
    expect(await following.status(o, stored!.txHash)).toEqual({ state: 'pending', ref: stored!.txHash });
    await anvil.mine(3);
    await h.scan(watching);
    const [replaced] = await sends(o.swapId);
    expect(replaced!.previousTxHashes).toEqual([stored!.txHash]);
    expect(parseTransaction(replaced!.rawTx as Hex).nonce).toBe(signed.nonce);
    const filled = await until(o, stored!.txHash, 'filled');
    expect(filled).toMatchObject({ state: 'filled', ref: replaced!.txHash });
    expect(await sends(o.swapId)).toHaveLength(1);
  });

  it('never signs a second swap for one swap id: concurrent submits, a new venue over a new adapter (a restart), a broadcast lost in a crash, an answer lost after storing', async () => {
    const swapsBefore = (await swapsToHot(uni.weth, usdt)).length;
    const o = order({ amount: new Money('0.5') });
    const [a, b] = await Promise.all([venue.submit(o), venue.submit(o)]);
    expect(a).toEqual(b);
    // Dropped, rebuilt from nothing but the configuration and the database: the same transaction.
    const restarted = newVenue(newAdapter());
    expect(await restarted.submit(o)).toEqual(a);
    await anvil.mine(1);
    expect(await restarted.submit(o)).toEqual(a);
    expect((await until(o, null, 'filled')).state).toBe('filled');
    expect(await sends(o.swapId)).toHaveLength(1);
    expect((await swapsToHot(uni.weth, usdt)).length).toBe(swapsBefore + 1);

    // Stored, then the process died before the node had it: the next submit broadcasts that very transaction.
    const lost = order({ amount: new Money('0.25') });
    const crashing = newAdapter();
    crashing.rpc.sendRawTransaction = async () => {
      throw new Error('connection reset (the process died here)');
    };
    const first = await newVenue(crashing).submit(lost);
    expect(first.state).toBe('pending');
    await anvil.mine(1);
    expect(await anvil.public.getTransactionReceipt({ hash: (first as { ref: Hex }).ref }).catch(() => null)).toBeNull();
    const again = await newVenue(newAdapter()).submit(lost);
    expect(again).toEqual(first);
    expect((await until(lost, null, 'filled')).state).toBe('filled');
    expect(await sends(lost.swapId)).toHaveLength(1);
    expect((await swapsToHot(uni.weth, usdt)).length).toBe(swapsBefore + 2);

    // Stored, then the node failed before the answer: an unknown outcome is thrown (never `failed`), and the same
    // submission later answers the stored transaction.
    const unknown = order({ amount: new Money('0.2') });
    const failing = newAdapter();
    failing.rpc.receipts = async () => {
      throw new Error('the node went away');
    };
    await expect(newVenue(failing).submit(unknown)).rejects.toThrow(/the node went away/);
    const [stored] = await sends(unknown.swapId);
    expect(await venue.submit(unknown)).toEqual({ state: 'pending', ref: stored!.txHash });
    expect((await until(unknown, null, 'filled')).state).toBe('filled');
    expect((await swapsToHot(uni.weth, usdt)).length).toBe(swapsBefore + 3);
  });

  it('answers failed, retryable, having signed nothing, while the hot wallet is short, gas costs more than its cap, or no signer is here', async () => {
    const short = order({ from: 'usdc', to: 'usdterc20', amount: new Money('1000000'), minOut: new Money('1') });
    const answer = await venue.submit(short);
    expect(answer).toMatchObject({ state: 'failed', ref: null, retryable: true });
    expect(answer.state === 'failed' && answer.reason).toMatch(/the hot wallet .* holds .* usdc, less than the swap sells; consolidation is asked to run/);
    expect(adapter.sender.shortOfFunds).toBe(true);
    const o = order();
    const capped = await newVenue(adapter, { maxFeeGwei: '0.000000001' }).submit(o);
    expect(capped).toMatchObject({ state: 'failed', ref: null, reason: "ethereum: gas costs more now than the venue's maxFeeGwei (0.000000001 gwei)", retryable: true });
    const watchOnly = evmAdapter('ethereum', chains.ethereum, { ...h.context, signer: null }) as EvmAdapter;
    expect(await newVenue(watchOnly).submit(o)).toMatchObject({ state: 'failed', reason: expect.stringMatching(/holds no signer/), retryable: true });
    expect(await sends(short.swapId)).toHaveLength(0);
    expect(await sends(o.swapId)).toHaveLength(0);
  });
});
