// What a mined swap did, read from its receipt (pure): the pair's Swap log naming the hot wallet as receiver, and the
// `to` token's Transfer logs from that pair to the hot wallet, which are what arrived. The pool's fee (0.3% of the
// input, kept in the pool) expressed in `to`: the output is what 99.7% of the input bought, so the 0.3% at the same
// price is output × 3 / 997, rounded down to the token's base units.
import { decodeEventLog, getAddress, hexToBigInt, type Address, type Hex } from 'viem';
import { TRANSFER_TOPIC } from '../../../chains/evm/adapter.ts';
import type { RpcLog } from '../../../chains/evm/rpc.ts';
import { pairAbi, SWAP_TOPIC } from './abi.ts';

export interface Fill {
  /** The pair that swapped. */
  pair: Address;
  /** Base units of `to` that reached the hot wallet. */
  received: bigint;
  /** The pool's fee in base units of `to` (received × 3 / 997, rounded down). */
  poolFee: bigint;
}

const topicAddress = (topic: Hex | undefined): Address | null => (topic ? getAddress(`0x${topic.slice(-40)}`) : null);

/** The 0.3% Uniswap V2 keeps of the input, in `to` at the price the rest was swapped at. */
export const poolFeeOf = (received: bigint): bigint => (received * 3n) / 997n;

/** The fill of a successful swap's receipt; throws when it holds no swap to the hot wallet (not a swap of ours). */
export function readFill(logs: RpcLog[], options: { hotWallet: Address; toToken: Address }): Fill {
  const hot = getAddress(options.hotWallet);
  const token = getAddress(options.toToken);
  const swaps = logs.filter((log) => log.topics[0] === SWAP_TOPIC && topicAddress(log.topics[2]) === hot);
  if (swaps.length !== 1) throw new Error(`the receipt has ${swaps.length} Swap logs paying the hot wallet, not one`);
  const swap = swaps[0]!;
  const pair = getAddress(swap.address);
  const { args } = decodeEventLog({ abi: pairAbi, eventName: 'Swap', topics: swap.topics as [Hex, ...Hex[]], data: swap.data });
  const received = logs
    .filter((log) => getAddress(log.address) === token && log.topics[0] === TRANSFER_TOPIC && topicAddress(log.topics[1]) === pair && topicAddress(log.topics[2]) === hot)
    .reduce((sum, log) => sum + hexToBigInt(log.data), 0n);
  // A token that takes a fee on transfer delivers less than the pair sent: what arrived is what counts.
  if (received === 0n || received > args.amount0Out + args.amount1Out) throw new Error(`the receipt's ${token} transfers to the hot wallet (${received}) do not match its Swap log`);
  return { pair, received, poolFee: poolFeeOf(received) };
}
