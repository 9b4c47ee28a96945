// The live autoswap venue: Uniswap V2 on an EVM network (docs/autoswap.md, "Uniswap V2 venue"). The hot wallet swaps
// through the router (swapExactETHForTokens, or swapExactTokensForTokens after an approve when the allowance is
// short), amountOutMin = the order's minOut, deadline = the order's. Transactions go through the chain's EvmSender:
// signed and stored (ChainSend, purpose 'autoswap', id from the swap id) under the spend lock before any broadcast,
// so a repeated submit, in this process or after a crash, broadcasts the stored transaction again or reports the
// mined one, never signs a second swap. Before signing, the router's getAmountsOut and an eth_call of the very swap
// refuse what would fill below minOut without spending gas.
import type { ChainSend } from '../../../../generated/prisma/client.ts';
import { Decimal } from 'decimal.js';
import { decodeFunctionResult, encodeFunctionData, getAddress, hexToBigInt, maxUint256, parseTransaction, type Address, type Hex } from 'viem';
import type { EvmAdapter } from '../../../chains/evm/adapter.ts';
import { gweiToWei, type Fees } from '../../../chains/evm/fees.ts';
import type { Call, RpcReceipt } from '../../../chains/evm/rpc.ts';
import { nodeEndpoint } from '../../../chains/node-endpoint.ts';
import { findSend } from '../../../chains/store.ts';
import { fromBaseUnits, toBaseUnits } from '../../../chains/units.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../../domain/assets.ts';
import type { Mode } from '../../../domain/modes.ts';
import type { SwapOrder, SwapState, SwapVenue } from '../../venue.ts';
import { allowanceAbi, factoryAbi, routerAbi } from './abi.ts';
import { parseUniswapV2Options, UNISWAP_V2_NETWORKS, type UniswapV2Config, type UniswapV2Network, type UniswapV2NetworkConfig } from './config.ts';
import { readFill } from './fill.ts';

/** Where the venue finds the live EVM node of a network in this process (the chains registry: Chains.liveEvm). */
export interface UniswapV2Deps {
  chains: { liveEvm(network: UniswapV2Network): EvmAdapter | null };
}

/** The ChainSend id of a swap's transaction, and of the approvals it needed. */
export const swapSendId = (swapId: string) => `autoswap:${swapId}`;
const approveSendId = (swapId: string) => `autoswap:${swapId}:approve`;
const resetSendId = (swapId: string) => `autoswap:${swapId}:approve-reset`;

/** What a node says when eth_call or eth_estimateGas hits a revert: the reason follows. */
const REVERTED = /execution reverted:?\s*(.*?)\s*(?:\(-?\d+\))?$/i;

interface Route {
  network: UniswapV2Network;
  venue: UniswapV2NetworkConfig;
  pair: UniswapV2NetworkConfig['pairs'][number];
}

/** What gas a swap cost: ether spent by its transactions (the swap and its approvals), mined ones only. */
export interface NetworkFee {
  currency: PaymentCurrency;
  amount: Decimal;
}

const failed = (reason: string, retryable: boolean, ref: string | null = null): SwapState => ({ state: 'failed', ref, reason, retryable });

export class UniswapV2Venue implements SwapVenue {
  readonly name = 'uniswap-v2';
  private readonly checked = new Map<UniswapV2Network, Promise<void>>();

  constructor(
    private readonly config: UniswapV2Config,
    private readonly deps: UniswapV2Deps,
  ) {}

  private route(from: PaymentCurrency, to: PaymentCurrency): Route | null {
    for (const network of UNISWAP_V2_NETWORKS) {
      const venue = this.config[network];
      const pair = venue?.pairs.find((p) => p.from === from && p.to === to);
      if (venue && pair) return { network, venue, pair };
    }
    return null;
  }

  supports(mode: Mode, from: PaymentCurrency, to: PaymentCurrency): boolean {
    const route = this.route(from, to);
    return mode === 'live' && route !== null && this.deps.chains.liveEvm(route.network) !== null;
  }

  minimum(from: PaymentCurrency, to: PaymentCurrency): Decimal | null {
    return this.route(from, to)?.pair.minimum ?? null;
  }

  async submit(order: SwapOrder): Promise<SwapState> {
    const found = this.routeOf(order);
    if ('state' in found) return found;
    const { route, node } = found;
    return this.scrubbed(node, async () => {
      const stored = await findSend(node.context.db, swapSendId(order.swapId));
      if (stored) return this.stateOf(order, route, node, stored, true);
      try {
        return await this.sign(order, route, node);
      } catch (e) {
        // Known to have signed no swap (none is stored): failed, worth another attempt (the hot wallet short, gas
        // above the cap, the node down, no signer here). Otherwise the outcome is unknown: thrown, so the same
        // submission is repeated and answers the stored transaction.
        const after = await findSend(node.context.db, swapSendId(order.swapId)).catch(() => undefined);
        if (after !== null) throw e;
        return failed(nodeEndpoint(node.config).scrubError(e).message, true);
      }
    });
  }

  async status(order: SwapOrder, _ref: string | null): Promise<SwapState> {
    const found = this.routeOf(order);
    if ('state' in found) return found;
    const { route, node } = found;
    return this.scrubbed(node, async () => {
      const stored = await findSend(node.context.db, swapSendId(order.swapId));
      // Nothing signed (a crash before the swap was stored): nothing can be on chain, submitting again is safe.
      if (!stored) return failed('no swap transaction was signed for it; submit it again', true);
      return this.stateOf(order, route, node, stored, true);
    });
  }

  /**
   * The gas a swap spent, in the chain's native coin: its swap and approval transactions that were mined (a reverted
   * one pays too). Not part of SwapState: the autoswap service journals it through this (docs/autoswap.md).
   */
  async networkFee(order: SwapOrder): Promise<NetworkFee | null> {
    const found = this.routeOf(order);
    if ('state' in found) return null;
    const { node } = found;
    return this.scrubbed(node, async () => {
      const rows = await node.context.db.chainSend.findMany({ where: { id: { in: [swapSendId(order.swapId), approveSendId(order.swapId), resetSendId(order.swapId)] } } });
      if (rows.length === 0) return null;
      const receipts = await node.rpc.receipts(rows.flatMap((r) => [r.txHash, ...r.previousTxHashes] as Hex[]));
      const wei = receipts.reduce((sum, r) => (r ? sum + hexToBigInt(r.gasUsed) * hexToBigInt(r.effectiveGasPrice) : sum), 0n);
      return { currency: node.native, amount: fromBaseUnits(wei, PAYMENT_CURRENCY_INFO[node.native].decimals) };
    });
  }

  private routeOf(order: SwapOrder): { route: Route; node: EvmAdapter } | SwapState {
    if (order.mode !== 'live') return failed(`${this.name} swaps live mode's money only`, false);
    const route = this.route(order.from, order.to);
    if (!route) return failed(`${this.name} has no ${order.from} -> ${order.to} pair configured (SWAP_CONFIG)`, false);
    const node = this.deps.chains.liveEvm(route.network);
    if (!node) return failed(`${route.network} has no live node in this process`, true);
    return { route, node };
  }

  /** Errors carry no URL, path, key or header of the node (as every adapter's: src/chains/node-endpoint.ts). */
  private async scrubbed<T>(node: EvmAdapter, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      throw nodeEndpoint(node.config).scrubError(e);
    }
  }

  /** Once per network: the router is a contract whose WETH is the configured one, and every pair has a pool. */
  private check(route: Route, node: EvmAdapter): Promise<void> {
    let done = this.checked.get(route.network);
    if (!done) {
      done = this.checkContracts(route, node);
      this.checked.set(route.network, done);
      done.catch(() => this.checked.delete(route.network));
    }
    return done;
  }

  private async checkContracts(route: Route, node: EvmAdapter): Promise<void> {
    const router = getAddress(route.venue.router);
    const where = `SWAP_CONFIG uniswapV2.${route.network}`;
    if ((await node.rpc.code(router)) === '0x') throw new Error(`${where}.router: ${router} is no contract on this chain`);
    const weth = await this.read(node, router, routerAbi, 'WETH', []);
    if (getAddress(weth) !== getAddress(route.venue.weth)) throw new Error(`${where}.weth: the router wraps ether into ${weth}, not ${route.venue.weth}`);
    const factory = await this.read(node, router, routerAbi, 'factory', []);
    for (const pair of route.venue.pairs) {
      const [a, b] = this.path(route, node, pair.from, pair.to);
      const pool = await this.read(node, factory, factoryAbi, 'getPair', [a, b]);
      if (hexToBigInt(pool) === 0n) throw new Error(`${where}: no ${pair.from}/${pair.to} pool exists on the router's factory ${factory}`);
    }
  }

  // viem's generics over a union of ABIs are more than this needs: each call site names its function and its type.
  private async read(node: EvmAdapter, to: Address, abi: readonly unknown[], functionName: string, args: unknown[], from: Address | null = null): Promise<any> {
    const data = (encodeFunctionData as (p: unknown) => Hex)({ abi, functionName, args });
    const answer = await node.rpc.ethCall(from, { to, value: 0n, data }, 'latest');
    return (decodeFunctionResult as (p: unknown) => unknown)({ abi, functionName, data: answer });
  }

  /** The router's path: the token contracts, WETH for the native coin. */
  private path(route: Route, node: EvmAdapter, from: PaymentCurrency, to: PaymentCurrency): [Address, Address] {
    const contract = (c: PaymentCurrency) => (c === node.native ? getAddress(route.venue.weth) : node.token(c)?.contract);
    const [a, b] = [contract(from), contract(to)];
    if (!a || !b) throw new Error(`${route.network}: ${!a ? from : to} has no contract in CHAINS_FILE`);
    return [a, b];
  }

  /** Refuses, or signs, stores and broadcasts the swap (and the approvals it needs first). */
  private async sign(order: SwapOrder, route: Route, node: EvmAdapter): Promise<SwapState> {
    await this.check(route, node);
    const { from, to } = order;
    const router = getAddress(route.venue.router);
    const path = this.path(route, node, from, to);
    const fromDecimals = PAYMENT_CURRENCY_INFO[from].decimals;
    const toDecimals = PAYMENT_CURRENCY_INFO[to].decimals;
    if (!order.amount.gt(0) || order.amount.decimalPlaces() > fromDecimals) return failed(`the amount ${order.amount.toFixed()} is not a positive amount of ${from} (at most ${fromDecimals} decimals)`, false);
    if (route.pair.minimum && order.amount.lt(route.pair.minimum)) return failed(`${order.amount.toFixed()} ${from} is below this venue's minimum of ${route.pair.minimum.toFixed()}`, false);
    const amountIn = toBaseUnits(order.amount, fromDecimals);
    // minOut is a floor: a fraction of the token's smallest unit rounds up, never down.
    const minOut = toBaseUnits(order.minOut.toDecimalPlaces(toDecimals, Decimal.ROUND_UP), toDecimals);
    if (minOut <= 0n) return failed('the minimum output must be above zero (it is what protects the swap from slippage)', false);

    const head = await node.rpc.block('latest', false);
    if (!head) throw new Error(`${node.rpc.where} answered no latest block`);
    const deadline = BigInt(Math.floor(order.deadline.getTime() / 1000));
    if (deadline <= hexToBigInt(head.timestamp)) return failed('its deadline passed before it was sent', true);

    // What the pool gives now, by the router's own arithmetic: below minOut, refused without spending gas.
    let quoted: bigint;
    try {
      const amounts = (await this.read(node, router, routerAbi, 'getAmountsOut', [amountIn, path])) as bigint[];
      quoted = amounts.at(-1)!;
    } catch (e) {
      const reverted = revertReason(e);
      if (reverted === null) throw e;
      return failed(`no route: the router cannot quote ${from} -> ${to} (${reverted})`, true);
    }
    const text = (units: bigint) => fromBaseUnits(units, toDecimals).toFixed();
    if (quoted < minOut) return failed(`the pool would give ${text(quoted)} ${to} for ${order.amount.toFixed()} ${from}, less than the minimum ${text(minOut)} (slippage)`, false);

    const hot = node.sender.hotWallet();
    await this.checkHeld(node, hot.address, from, amountIn);
    const fromToken = from === node.native ? null : node.token(from)!;
    let approving = false;
    if (fromToken) {
      const allowance = (await this.read(node, fromToken.contract, allowanceAbi, 'allowance', [hot.address, router])) as bigint;
      if (allowance < amountIn) {
        approving = true;
        await this.approve(order, route, node, fromToken.contract, fromToken.asset, allowance);
      }
    }

    const call: Call = {
      to: router,
      value: fromToken ? 0n : amountIn,
      data: fromToken
        ? encodeFunctionData({ abi: routerAbi, functionName: 'swapExactTokensForTokens', args: [amountIn, minOut, path, hot.address, deadline] })
        : encodeFunctionData({ abi: routerAbi, functionName: 'swapExactETHForTokens', args: [minOut, path, hot.address, deadline] }),
    };
    // The transaction carries gasLimit (unused gas is not charged): an estimate cannot foresee what the block changes,
    // e.g. the pair's price accumulators, written from zero in the first block after a quiet one (two new slots).
    const gas = BigInt(route.venue.gasLimit);
    // The very swap, run against the latest block: a revert (the pool moved, the deadline) refuses it for free. Not
    // possible while its approval waits to be mined.
    if (!approving) {
      let estimate: bigint;
      try {
        await node.rpc.ethCall(hot.address, call, 'latest');
        estimate = await node.rpc.estimateGas(hot.address, call);
      } catch (e) {
        const reverted = revertReason(e);
        if (reverted === null) throw e;
        return failed(`the swap would revert now: ${reverted}`, false);
      }
      if (estimate > gas) return failed(`the swap needs ${estimate} gas, more than gasLimit ${gas} (SWAP_CONFIG)`, false);
    }
    const fees = await this.fees(route, node);
    const row = await node.sender.store(hot, { id: swapSendId(order.swapId), purpose: 'autoswap', asset: from, to: router, amount: order.amount, call, gas, fees });
    return this.stateOf(order, route, node, row, true);
  }

  /**
   * Approves the router for the token, as much as it can ever need (one approval serves every later swap). Not when
   * an approval of ours for it is on its way already. A token with a non-zero allowance left is first set to zero
   * (USDT refuses to change one non-zero allowance into another).
   */
  private async approve(order: SwapOrder, route: Route, node: EvmAdapter, token: Address, asset: PaymentCurrency, allowance: bigint): Promise<void> {
    const open = await node.context.db.chainSend.findMany({
      where: { network: route.network, purpose: 'autoswap', toAddress: token, id: { endsWith: ':approve' }, status: { in: ['signed', 'sent'] } },
    });
    if (open.length > 0) {
      for (const row of open) await node.sender.offer(row, false);
      return;
    }
    const hot = node.sender.hotWallet();
    const router = getAddress(route.venue.router);
    const steps: [string, bigint][] = allowance > 0n ? [[resetSendId(order.swapId), 0n], [approveSendId(order.swapId), maxUint256]] : [[approveSendId(order.swapId), maxUint256]];
    for (const [id, value] of steps) {
      const call: Call = { to: token, value: 0n, data: encodeFunctionData({ abi: allowanceAbi, functionName: 'approve', args: [router, value] }) };
      const gas = min(BigInt(route.venue.gasLimit), await node.sender.gasFor(hot.address, call));
      const row = await node.sender.store(hot, { id, purpose: 'autoswap', asset, to: token, amount: new Decimal(0), call, gas, fees: await this.fees(route, node) });
      await node.sender.offer(row, false);
    }
  }

  /** The hot wallet holds what the swap sells (its open sends are counted when the swap is stored). */
  private async checkHeld(node: EvmAdapter, hot: Address, asset: PaymentCurrency, units: bigint): Promise<void> {
    const token = asset === node.native ? null : node.token(asset)!;
    const [held] = token ? await node.rpc.tokenBalances(token.contract, [hot], 'latest') : await node.rpc.balances([hot], 'latest');
    if (held! >= units) return;
    node.sender.shortOfFunds = true;
    throw new Error(`${node.network}: the hot wallet ${hot} holds ${fromBaseUnits(held!, PAYMENT_CURRENCY_INFO[asset].decimals).toFixed()} ${asset}, less than the swap sells; consolidation is asked to run`);
  }

  /** The chain's fees, within this venue's cap; while the base fee is above the cap, swaps wait (failed, retryable). */
  private async fees(route: Route, node: EvmAdapter): Promise<Fees> {
    const head = await node.head();
    const fees = await node.sender.fees(head);
    const cap = gweiToWei(route.venue.maxFeeGwei);
    if (cap === null) return fees;
    if ((head.baseFee ?? (fees.type === 'legacy' ? fees.gasPrice : 0n)) > cap) {
      throw new Error(`${route.network}: gas costs more now than the venue's maxFeeGwei (${route.venue.maxFeeGwei!.toFixed()} gwei)`);
    }
    if (fees.type === 'legacy') return { type: 'legacy', gasPrice: min(fees.gasPrice, cap) };
    const maxFeePerGas = min(fees.maxFeePerGas, cap);
    return { type: 'eip1559', maxFeePerGas, maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas, maxFeePerGas) };
  }

  /**
   * Where a stored swap stands: pending until its receipt (of any hash it had) is as deep as the configured
   * confirmations, then filled (read from its logs) or failed (reverted: the reason replayed). An unmined one is
   * offered to the node again (`offer`), and failed once another transaction took its nonce that deep.
   */
  private async stateOf(order: SwapOrder, route: Route, node: EvmAdapter, send: ChainSend, offer: boolean): Promise<SwapState> {
    const confirmations = route.venue.confirmations ?? node.confirmations;
    const hashes = [send.txHash, ...send.previousTxHashes] as Hex[];
    const [receipts, head] = await Promise.all([node.rpc.receipts(hashes), node.head()]);
    const receipt = receipts.find((r): r is RpcReceipt => r !== null);
    if (!receipt) {
      const safe = head.number - confirmations + 1;
      if (send.nonce !== null && safe >= 0 && (await node.rpc.transactionCount(send.fromAddress as Address, BigInt(safe))) > BigInt(send.nonce)) {
        return failed(`another transaction took the nonce of swap transaction ${send.txHash}: it can never be mined`, false, send.txHash);
      }
      if (offer) await node.sender.offer(send, false);
      return { state: 'pending', ref: send.txHash };
    }
    const ref = receipt.transactionHash;
    if (head.number - Number(hexToBigInt(receipt.blockNumber)) + 1 < confirmations) return { state: 'pending', ref };
    if (receipt.status !== '0x1') return failed(await this.whyReverted(order, node, send, receipt), false, ref);
    const toToken = node.token(order.to)!;
    const fill = readFill(receipt.logs, { hotWallet: getAddress(send.fromAddress), toToken: toToken.contract });
    const decimals = PAYMENT_CURRENCY_INFO[order.to].decimals;
    return { state: 'filled', ref, toAmount: fromBaseUnits(fill.received, decimals), venueFee: fromBaseUnits(fill.poolFee, decimals) };
  }

  /** A reverted swap's reason: its deadline, or the router's answer to the same call replayed on the block it was mined in. */
  private async whyReverted(order: SwapOrder, node: EvmAdapter, send: ChainSend, receipt: RpcReceipt): Promise<string> {
    const what = `the swap transaction ${receipt.transactionHash} reverted on chain (its gas is spent)`;
    const block = await node.rpc.block(hexToBigInt(receipt.blockNumber), false);
    if (block && hexToBigInt(block.timestamp) > BigInt(Math.floor(order.deadline.getTime() / 1000))) return `${what}: UniswapV2Router: EXPIRED (mined after its deadline)`;
    const tx = parseTransaction(send.rawTx as Hex);
    if (tx.gas !== undefined && hexToBigInt(receipt.gasUsed) >= tx.gas) return `${what}: it ran out of gas (gasLimit ${tx.gas}, SWAP_CONFIG)`;
    try {
      await node.rpc.ethCall(send.fromAddress as Address, { to: tx.to!, value: tx.value ?? 0n, data: tx.data }, hexToBigInt(receipt.blockNumber));
    } catch (e) {
      const reason = revertReason(e);
      if (reason) return `${what}: ${reason}`;
    }
    return what;
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** The reason of a revert the node reported for eth_call / eth_estimateGas; null for any other failure (node down...). */
function revertReason(e: unknown): string | null {
  const message = e instanceof Error ? e.message : String(e);
  const match = REVERTED.exec(message);
  if (!match) return null;
  return match[1] || 'reverted without a reason';
}

/**
 * The venue of SWAP_CONFIG's `{"venue": "uniswap-v2", ...}` entry (the autoswap venue registry's factory signature:
 * the entry without `venue`, and the platform's chains). Throws SwapConfigError naming what is wrong.
 */
export function uniswapV2Venue(options: Record<string, unknown>, deps: UniswapV2Deps): UniswapV2Venue {
  return new UniswapV2Venue(parseUniswapV2Options(options, (network) => deps.chains.liveEvm(network)?.assets ?? null), deps);
}
