// EVM chains (Ethereum, BNB Smart Chain) through a node's JSON-RPC (docs/chains-evm.md). Receiving: one address per
// payment, derived watch-only from the account's xpub. Scanning reads blocks in order from our own cursor (never the
// node's wallet): native transfers from each block's transactions, ERC-20 Transfer logs of the configured tokens
// from its logs, receipts for what pays us (a reverted native transfer moves nothing; a log's place in its
// transaction names the transfer). Reorgs, depth and drops are block-scan.ts's; sends are sender.ts's, consolidation
// sweeps.ts's.
import type { HDKey } from '@scure/bip32';
import { getAddress, hexToBigInt, toEventSelector, type Address, type Hex } from 'viem';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type Network, type PaymentCurrency } from '../../domain/assets.ts';
import { AppError } from '../../errors/app-error.ts';
import type { AddressRequest, AllocatedAddress, OutgoingTransfer } from '../adapter.ts';
import { validateAddress } from '../address-formats.ts';
import { scanBlocks, type BlockScanState, type BlockSource, type PendingTransfer, type ReadBlock } from '../block-scan.ts';
import type { EvmChainConfig } from '../config.ts';
import { NATIVE_ASSET, type AddressBalance } from '../custody.ts';
import { deriveAddress, deriveChainAddress, parseExtendedPublicKey } from '../hd.ts';
import { HOT_WALLET, signerRefusal } from '../signer.ts';
import type { ChainContext, NodeAdapter } from '../node-adapter.ts';
import { allocateIndex, WatchedSet } from '../store.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import { fromBaseUnits } from '../units.ts';
import type { EvmChain, EvmHead, EvmNetwork, EvmToken } from './chain.ts';
import { EvmRpc, type RpcBlock, type RpcLog, type RpcReceipt } from './rpc.ts';
import { EvmSender } from './sender.ts';
import { EvmSweeper } from './sweeps.ts';

/** keccak-256 of Transfer(address,address,uint256): topic 0 of every ERC-20 transfer log. */
export const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)');
const BLOCKS_PER_SCAN = 200;
/** Beyond this many transactions paying us in one block, its receipts are read in one call rather than one each. */
const RECEIPTS_ONE_BY_ONE = 8;



/** A transfer followed until final; its sender and nonce tell when it can never come back after a reorg. */
export interface EvmPending extends PendingTransfer {
  sender: string;
  nonce: number;
}

export interface EvmState extends BlockScanState<EvmPending> {
  /** Open sends not mined yet: the block each was broadcast at (last), for the replacement policy. */
  waiting: Record<string, number>;
  /** When consolidation last ran (ISO). */
  sweptAt: string | null;
}

export type { EvmHead, EvmToken } from './chain.ts';

export function evmAdapter(network: Network, config: EvmChainConfig, context: ChainContext): NodeAdapter<EvmState> {
  if (network !== 'ethereum' && network !== 'bsc') throw new Error(`${network} is no EVM network`);
  return new EvmAdapter(network, config, context);
}

export class EvmAdapter implements NodeAdapter<EvmState>, BlockSource<EvmHead, EvmPending>, EvmChain {
  readonly confirmations: number;
  readonly pollMs: number;
  readonly native: PaymentCurrency;
  readonly rpc: EvmRpc;
  readonly tokens: EvmToken[];
  private readonly account: HDKey;
  private readonly watched: WatchedSet;
  /** The hot wallet, from the xpub (chain 1): watching needs no signer. */
  readonly hotAddress: string;
  private readonly tokenByContract: Map<string, EvmToken>;
  /** Sends from our addresses (withdrawals, consolidation, autoswaps: src/autoswap/venues/uniswap-v2). */
  readonly sender: EvmSender;
  private readonly sweeper: EvmSweeper;

  constructor(
    readonly network: EvmNetwork,
    readonly config: EvmChainConfig,
    readonly context: ChainContext,
  ) {
    this.native = NATIVE_ASSET[network];
    this.confirmations = config.confirmations ?? PAYMENT_CURRENCY_INFO[this.native].confirmations;
    this.pollMs = config.pollMs;
    this.rpc = new EvmRpc(nodeEndpoint(config));
    this.account = parseExtendedPublicKey(config.xpub);
    // Addresses are handed out only if the signer could spend them (a process without the signer cannot check).
    if (context.signer && !context.signer.ownsAccount(network, false, this.account)) {
      throw new Error(`${network}: the xpub in CHAINS_FILE is not the signer's account of this network (docs/chains-evm.md): payments to its addresses could not be spent`);
    }
    this.tokens = Object.entries(config.tokens).map(([asset, contract]) => {
      const info = PAYMENT_CURRENCY_INFO[asset as PaymentCurrency];
      if (info.network !== network) throw new Error(`${network}: tokens.${asset} is a currency of ${info.network}, not of this chain`);
      return { asset: asset as PaymentCurrency, contract: getAddress(contract!), decimals: info.decimals };
    });
    this.tokenByContract = new Map(this.tokens.map((t) => [t.contract.toLowerCase(), t]));
    this.watched = new WatchedSet(context.db, network, (address) => address.toLowerCase());
    this.hotAddress = deriveChainAddress(this.account, network, HOT_WALLET.chain, HOT_WALLET.index);
    this.sender = new EvmSender(this);
    this.sweeper = new EvmSweeper(this, this.sender);
  }

  /** The payment currencies this chain carries here: the native one and the configured tokens. */
  get assets(): PaymentCurrency[] {
    return [this.native, ...this.tokens.map((t) => t.asset)];
  }

  token(asset: PaymentCurrency): EvmToken | undefined {
    return this.tokens.find((t) => t.asset === asset);
  }

  isValidAddress(address: string): boolean {
    return validateAddress('evm', address);
  }

  /** The receiving address at `index` (<account>/0/<index>). */
  depositAddress(index: number): Address {
    return deriveAddress(this.account, this.network, index) as Address;
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    if (!this.assets.includes(request.paymentCurrency)) {
      const known = PAYMENT_CURRENCIES.includes(request.paymentCurrency) && PAYMENT_CURRENCY_INFO[request.paymentCurrency].network === this.network;
      throw new AppError('SERVICE_UNAVAILABLE', known ? `Payments in ${request.paymentCurrency} are unavailable: no contract is configured for it on ${this.network}` : `${this.network} does not carry ${request.paymentCurrency}`);
    }
    const { address } = await allocateIndex(this.context.db, this.network, request.ownerId, (index) => this.depositAddress(index));
    return { address, tag: null };
  }

  /** The node is the chain configured, each token contract is there with the decimals its currency has. */
  async connect(): Promise<void> {
    const chainId = await this.rpc.chainId();
    if (chainId !== BigInt(this.config.chainId)) throw new Error(`the node is on chain ${chainId}, CHAINS_FILE says ${this.config.chainId}`);
    for (const token of this.tokens) {
      if ((await this.rpc.code(token.contract)) === '0x') throw new Error(`tokens.${token.asset}: ${token.contract} is no contract on this chain`);
      const decimals = await this.rpc.tokenDecimals(token.contract);
      if (decimals !== token.decimals) throw new Error(`tokens.${token.asset}: ${token.contract} has ${decimals} decimals, ${token.asset} has ${token.decimals}`);
    }
  }

  async initialState(): Promise<EvmState> {
    const next = this.config.startBlock === 'latest' ? (await this.head()).number : this.config.startBlock;
    return { next, recent: [], pending: [], waiting: {}, sweptAt: null };
  }

  async scan(state: EvmState): Promise<EvmState> {
    const { state: scanned, head, forkedAfter } = await scanBlocks(this, state, {
      network: this.network,
      confirmations: this.confirmations,
      blocksPerScan: BLOCKS_PER_SCAN,
      parallel: this.config.batchBlocks,
      keep: Math.max(64, this.confirmations * 2),
      report: this.context.report,
      logger: this.context.logger,
    });
    if (forkedAfter !== null) await this.warnCreditedAfter(forkedAfter);
    const waiting = await this.sender.follow(head, state.waiting);
    const sweptAt = await this.sweeper.sweepIfDue(head, state.sweptAt);
    return { ...scanned, waiting, sweptAt };
  }

  /**
   * A reorg deeper than a payment needs took blocks with transfers we credited: not undone automatically (the chain
   * may take them back in its next blocks). Logged for an operator; ledger:verify's custody check shows what is short.
   */
  private async warnCreditedAfter(block: number): Promise<void> {
    const credited = await this.context.db.chainTransfer.findMany({
      where: { network: this.network, state: 'confirmed', blockNumber: { gt: BigInt(block) } },
      select: { id: true, txHash: true, outputIndex: true, blockNumber: true },
    });
    for (const t of credited) {
      this.context.logger.error({ network: this.network, transferId: t.id, txHash: t.txHash, block: t.blockNumber?.toString() }, 'a credited transfer was in a block a reorg replaced: an operator must check it (docs/chains-evm.md)');
    }
  }

  // --- BlockSource ---

  async head(): Promise<EvmHead> {
    const block = await this.rpc.block('latest', false);
    if (!block) throw new Error(`${this.rpc.where} answered no latest block`);
    return { number: Number(hexToBigInt(block.number)), baseFee: block.baseFeePerGas ? hexToBigInt(block.baseFeePerGas) : null };
  }

  async blockId(n: number): Promise<string> {
    const block = await this.rpc.block(BigInt(n), false);
    if (!block) throw new Error(`${this.rpc.where} has no block ${n}`);
    return block.hash;
  }

  async read(n: number): Promise<ReadBlock<EvmPending>> {
    const block = await this.rpc.block(BigInt(n), true);
    if (!block || Number(hexToBigInt(block.number)) !== n) throw new Error(`${this.rpc.where} has no block ${n}`);
    // Addresses after the block is read: anything paid in it was handed out (and written) before. Loaded at the
    // scan's start, they would miss an address handed out meanwhile, and the cursor would pass its payment.
    await this.watched.refresh();
    let natives = block.transactions.filter((tx) => tx.to !== null && this.watched.has(tx.to) && hexToBigInt(tx.value) > 0n);
    // Our own gas top-ups pay deposit addresses too: they are no payments (a withdrawal to one of them is).
    const fromHot = natives.filter((tx) => tx.from.toLowerCase() === this.hotAddress.toLowerCase()).map((tx) => tx.hash);
    if (fromHot.length > 0) {
      const topups = await this.topupsAmong(fromHot);
      natives = natives.filter((tx) => !topups.has(tx.hash));
    }
    const logs = this.tokens.length === 0 ? [] : (await this.rpc.logs(block.hash, this.tokens.map((t) => t.contract), TRANSFER_TOPIC)).filter((log) => this.paysUs(log));
    const paying = [...new Set([...natives.map((tx) => tx.hash), ...logs.map((log) => log.transactionHash)])];
    const transfers: EvmPending[] = [];
    if (paying.length > 0) {
      const receipts = await this.receiptsOf(block, paying);
      const txs = new Map(block.transactions.map((tx) => [tx.hash, tx]));
      for (const tx of natives) {
        if (receipts.get(tx.hash)!.status !== '0x1') continue; // reverted: nothing moved
        transfers.push(this.pending(this.native, tx.hash, 0, tx.from, tx.to!, hexToBigInt(tx.value), tx));
      }
      for (const log of logs) {
        const receipt = receipts.get(log.transactionHash)!;
        const tx = txs.get(log.transactionHash)!;
        // Its place among its transaction's logs: the same wherever a reorg puts the transaction (a block's log
        // index is not).
        const position = receipt.logs.findIndex((l) => l.logIndex === log.logIndex);
        const token = this.tokenByContract.get(log.address.toLowerCase())!;
        const units = hexToBigInt(log.data);
        if (position < 0 || units === 0n) continue;
        transfers.push(this.pending(token.asset, log.transactionHash, position + 1, topicAddress(log.topics[1]!), topicAddress(log.topics[2]!), units, tx));
      }
    }
    return { n, id: block.hash, parent: block.parentHash, transfers };
  }

  /** Which of `hashes` are gas top-ups we sent (under any of the hashes a replaced one had). */
  private async topupsAmong(hashes: Hex[]): Promise<Set<string>> {
    const rows = await this.context.db.$queryRaw<{ txHash: string; previousTxHashes: string[] }[]>`
      SELECT "txHash", "previousTxHashes" FROM "ChainSend"
      WHERE "network" = ${this.network} AND "purpose" = 'topup' AND ("txHash" = ANY(${hashes}::text[]) OR "previousTxHashes" && ${hashes}::text[])`;
    return new Set(rows.flatMap((r) => [r.txHash, ...r.previousTxHashes]));
  }

  /** A Transfer log of a configured token to one of our addresses (three topics: the standard's indexed from and to). */
  private paysUs(log: RpcLog): boolean {
    return log.topics.length === 3 && this.tokenByContract.has(log.address.toLowerCase()) && this.watched.has(topicAddress(log.topics[2]!));
  }

  /** Receipts of `hashes`, all of this very block (the chain may move while it is read: then read it again). */
  private async receiptsOf(block: RpcBlock, hashes: Hex[]): Promise<Map<Hex, RpcReceipt>> {
    const receipts =
      hashes.length > RECEIPTS_ONE_BY_ONE ? ((await this.rpc.blockReceipts(block.hash)) ?? []) : ((await this.rpc.receipts(hashes)).filter(Boolean) as RpcReceipt[]);
    const byHash = new Map(receipts.map((r) => [r.transactionHash, r]));
    for (const hash of hashes) {
      if (byHash.get(hash)?.blockHash !== block.hash) throw new Error(`block ${hexToBigInt(block.number)} changed while it was read (a reorg): read again at the next scan`);
    }
    return byHash;
  }

  private pending(asset: PaymentCurrency, txHash: Hex, outputIndex: number, from: string, to: string, units: bigint, tx: { from: Address; nonce: Hex }): EvmPending {
    return {
      txHash,
      outputIndex,
      asset,
      from: getAddress(from),
      to: this.watched.lookup(to)!,
      amount: fromBaseUnits(units, PAYMENT_CURRENCY_INFO[asset].decimals).toFixed(),
      block: null,
      reported: 0,
      sender: getAddress(tx.from),
      nonce: Number(hexToBigInt(tx.nonce)),
    };
  }

  /**
   * Out of the chain since a reorg, it can never come back once its sender's nonce is used, as deep as a payment
   * needs, by another transaction (a receipt of its own means it is back and will be read with its block).
   */
  async gone(p: EvmPending, head: EvmHead): Promise<boolean> {
    const [receipt] = await this.rpc.receipts([p.txHash as Hex]);
    if (receipt) return false;
    const safe = head.number - this.confirmations + 1;
    if (safe < 0) return false;
    return (await this.rpc.transactionCount(p.sender as Address, BigInt(safe))) > BigInt(p.nonce);
  }

  // --- sending ---

  sendRefusal(asset: PaymentCurrency): string | null {
    const noSigner = signerRefusal(this.context);
    if (noSigner) return noSigner;
    return this.assets.includes(asset) ? null : `no contract is configured for ${asset} on ${this.network}`;
  }

  send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    return this.sender.send(transfer);
  }

  // --- custody ---

  /** Balances as deep as a payment needs (the custody check compares them with the records of final transfers). */
  async watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    const head = await this.head();
    const safe = BigInt(Math.max(0, head.number - this.confirmations + 1));
    const holders = addresses.map((a) => getAddress(a));
    const balances: AddressBalance[] = [];
    for (let i = 0; i < holders.length; i += 100) {
      const chunk = holders.slice(i, i + 100);
      const natives = await this.rpc.balances(chunk, safe);
      chunk.forEach((address, j) => balances.push({ address, asset: this.native, amount: fromBaseUnits(natives[j]!, PAYMENT_CURRENCY_INFO[this.native].decimals).toFixed() }));
      for (const token of this.tokens) {
        const units = await this.rpc.tokenBalances(token.contract, chunk, safe);
        chunk.forEach((address, j) => balances.push({ address, asset: token.asset, amount: fromBaseUnits(units[j]!, token.decimals).toFixed() }));
      }
    }
    return balances;
  }
}

/** The address in the low 20 bytes of a 32-byte topic. */
const topicAddress = (topic: Hex): Address => getAddress(`0x${topic.slice(-40)}`);

