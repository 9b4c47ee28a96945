// The EVM JSON-RPC calls the adapter makes, typed, over the shared JSON-RPC client (http.ts: one timeout, batches,
// messages that name the node, never its URL). Quantities arrive as hex and leave as bigint; nothing is a float.
import { decodeFunctionResult, encodeFunctionData, erc20Abi, hexToBigInt, numberToHex, type Address, type Hex } from 'viem';
import { JsonRpc, type RpcCall } from '../http.ts';
import type { NodeEndpoint } from '../node-endpoint.ts';

export interface RpcTransaction {
  hash: Hex;
  from: Address;
  to: Address | null;
  value: Hex;
  nonce: Hex;
}

export interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  baseFeePerGas?: Hex;
  transactions: RpcTransaction[];
}

export interface RpcLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  logIndex: Hex;
  transactionHash: Hex;
  blockHash: Hex;
}

export interface RpcReceipt {
  transactionHash: Hex;
  blockHash: Hex;
  blockNumber: Hex;
  /** 0x1 success, 0x0 reverted. */
  status: Hex;
  gasUsed: Hex;
  effectiveGasPrice: Hex;
  logs: RpcLog[];
}

export interface Call {
  to: Address;
  value: bigint;
  data?: Hex;
}

/** A block: a number, or a tag. */
export type BlockRef = bigint | 'latest' | 'pending';
const ref = (block: BlockRef) => (typeof block === 'bigint' ? numberToHex(block) : block);

export class EvmRpc {
  private readonly rpc: JsonRpc;
  constructor(node: string | NodeEndpoint, timeoutMs?: number) {
    this.rpc = new JsonRpc(node, timeoutMs ? { timeoutMs } : {});
  }

  get where(): string {
    return this.rpc.where;
  }

  batch<T>(calls: RpcCall[]): Promise<T[]> {
    return this.rpc.batch<T>(calls);
  }

  async chainId(): Promise<bigint> {
    return hexToBigInt(await this.rpc.call<Hex>('eth_chainId'));
  }

  /** Block `n` (or the latest) with its transactions; null when the node has no such block. */
  block(n: BlockRef, full = true): Promise<RpcBlock | null> {
    return this.rpc.call<RpcBlock | null>('eth_getBlockByNumber', [ref(n), full]);
  }

  /** Every receipt of the block with this hash. */
  blockReceipts(blockHash: Hex): Promise<RpcReceipt[] | null> {
    return this.rpc.call<RpcReceipt[] | null>('eth_getBlockReceipts', [blockHash]);
  }

  /** Receipts of these transactions, null where none (not mined, or not in the canonical chain). */
  receipts(hashes: Hex[]): Promise<(RpcReceipt | null)[]> {
    return this.rpc.batch<RpcReceipt | null>(hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
  }

  /** Logs of one block (by hash: what was read with it, whatever happens to the chain meanwhile). */
  logs(blockHash: Hex, addresses: Address[], topic0: Hex): Promise<RpcLog[]> {
    return this.rpc.call<RpcLog[]>('eth_getLogs', [{ blockHash, address: addresses, topics: [topic0] }]);
  }

  async transactionCount(address: Address, block: BlockRef): Promise<bigint> {
    return hexToBigInt(await this.rpc.call<Hex>('eth_getTransactionCount', [address, ref(block)]));
  }

  async balances(addresses: Address[], block: BlockRef): Promise<bigint[]> {
    const answers = await this.rpc.batch<Hex>(addresses.map((a) => ({ method: 'eth_getBalance', params: [a, ref(block)] })));
    return answers.map((hex) => hexToBigInt(hex));
  }

  async tokenBalances(token: Address, holders: Address[], block: BlockRef): Promise<bigint[]> {
    const answers = await this.rpc.batch<Hex>(
      holders.map((holder) => ({ method: 'eth_call', params: [{ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder] }) }, ref(block)] })),
    );
    return answers.map((data) => decodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', data }));
  }

  async tokenDecimals(token: Address): Promise<number> {
    const data = await this.rpc.call<Hex>('eth_call', [{ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' }) }, 'latest']);
    return decodeFunctionResult({ abi: erc20Abi, functionName: 'decimals', data });
  }

  code(address: Address): Promise<Hex> {
    return this.rpc.call<Hex>('eth_getCode', [address, 'latest']);
  }

  async estimateGas(from: Address, call: Call): Promise<bigint> {
    // Against the latest block, not the pool: our other sends waiting there may be mined after this one.
    return hexToBigInt(await this.rpc.call<Hex>('eth_estimateGas', [{ from, to: call.to, value: numberToHex(call.value), ...(call.data ? { data: call.data } : {}) }, 'latest']));
  }

  /** eth_call: what `call` from `from` answers at `block` (a revert throws with the node's message and reason). */
  ethCall(from: Address | null, call: Call, block: BlockRef): Promise<Hex> {
    const tx = { ...(from ? { from } : {}), to: call.to, ...(call.value ? { value: numberToHex(call.value) } : {}), ...(call.data ? { data: call.data } : {}) };
    return this.rpc.call<Hex>('eth_call', [tx, ref(block)]);
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    return hexToBigInt(await this.rpc.call<Hex>('eth_maxPriorityFeePerGas'));
  }

  async gasPrice(): Promise<bigint> {
    return hexToBigInt(await this.rpc.call<Hex>('eth_gasPrice'));
  }

  sendRawTransaction(raw: Hex): Promise<Hex> {
    return this.rpc.call<Hex>('eth_sendRawTransaction', [raw]);
  }
}
