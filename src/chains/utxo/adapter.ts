// The UTXO adapter: Bitcoin, Litecoin and Bitcoin Cash through a Bitcoin Core-style node (JSON-RPC) and its wallet,
// which watches our addresses without holding any key. One implementation; the networks differ only in address
// codecs (networks.ts). docs/chains-utxo.md describes the policies (watching, reorgs, consolidation, fees).
//
// A scan: listsinceblock from the cursor (kept `confirmations - 1` blocks below the tip, so what is not final yet
// is listed again at every scan) reports receives to our derived addresses; transfers still `seen` that the listing
// no longer covers are asked for one by one; our sends are followed to final; confirmed deposits are consolidated
// into the hot wallet when due. Reports are idempotent, so a scan repeated after a crash changes nothing.
import type { HDKey } from '@scure/bip32';
import type { Decimal } from 'decimal.js';

import { PAYMENT_CURRENCY_INFO, type Network, type PaymentCurrency } from '../../domain/assets.ts';
import { Money, toMoney } from '../../domain/money.ts';
import { AppError } from '../../errors/app-error.ts';
import type { Logger } from '../../logger.ts';
import type { AddressRequest, AllocatedAddress, OutgoingTransfer, TransferReport } from '../adapter.ts';
import { ADDRESS_FORMAT, validateAddress } from '../address-formats.ts';
import type { UtxoChainConfig } from '../config.ts';
import { NATIVE_ASSET, type AddressBalance } from '../custody.ts';
import { ACCOUNT_PATHS, deriveAddress, deriveChainAddress, parseExtendedPublicKey } from '../hd.ts';
import type { ChainContext, NodeAdapter } from '../node-adapter.ts';
import { HOT_WALLET } from '../signer.ts';
import { allocateIndex, derivedAmong, highestIndex, openSends, sendInputs } from '../store.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import { chainDescriptor, importRequestFor, SCRIPT_KIND, type ImportRequest } from './descriptors.ts';
import { incomingStep, type KnownTransfer } from './follow.ts';
import { addressOptions, DUST_RELAY_FEE, isUtxoNetwork, type UtxoNetwork } from './networks.ts';
import { BitcoinRpc, coins, outpoint, RPC_ERROR, RpcError, type TxStatus, type Unspent } from './rpc.ts';
import { perVbyte } from './fees.ts';
import { UtxoSender } from './sender.ts';
import { UtxoSweeper } from './sweeps.ts';
import type { SpendRules } from './transactions.ts';

/** Where a scan resumes: saved by the watcher after every scan. */
export interface UtxoScanState {
  /** The block listsinceblock lists after (its hash: a reorg below it shows up as `removed`). */
  block: string;
  height: number;
  /** When confirmed deposits were last consolidated into the hot wallet (ISO time), or never. */
  sweptAt: string | null;
}

export { FALLBACK_FEE_RATE } from './fees.ts';
/** importmulti ranges per call: each call stays short, however many addresses must be watched. */
const IMPORT_CHUNK = 5_000;
/** Imports with a rescan read the chain from the first address's creation: minutes to hours on main. */
const RESCAN_TIMEOUT_MS = 6 * 3_600_000;
/** Reports delivered at once (each is one database transaction locking its invoice). */
const REPORT_CONCURRENCY = 4;
/** Addresses per listunspent call of the custody check. */
const BALANCE_CHUNK = 1_000;

interface WalletEntry {
  txid: string;
  vout: number;
  address?: string;
  category: string;
  amount: unknown;
  confirmations: number;
  blockheight?: number;
}

interface SinceBlock {
  transactions: WalletEntry[];
  removed?: WalletEntry[];
  lastblock: string;
}

/** One receive to one of our addresses, as the node lists it. */
interface Observed {
  txid: string;
  vout: number;
  address: string;
  amount: Decimal;
  confirmations: number;
  blockheight: number | null;
}

export function utxoAdapter(network: Network, config: UtxoChainConfig, context: ChainContext): NodeAdapter<UtxoScanState> {
  if (!isUtxoNetwork(network)) throw new Error(`${network} is not a UTXO network`);
  return new UtxoAdapter(network, config, context);
}

export class UtxoAdapter implements NodeAdapter<UtxoScanState> {
  readonly confirmations: number;
  readonly pollMs: number;
  readonly asset: PaymentCurrency;
  private readonly account: HDKey;
  readonly test: boolean;
  readonly spending: SpendRules;
  readonly node: BitcoinRpc;
  readonly wallet: BitcoinRpc;
  readonly logger: Logger;
  /** The service's own address (<account>/1/0): consolidation target, withdrawals' source, change. */
  readonly hotAddress: string;
  private setup: Promise<void> | null = null;
  private descriptorWallet = false;
  /** The node's minimum relay fee, in satoshis per virtual byte. */
  relayRate: Decimal = new Money(1);
  /** Receiving indexes the node is known to watch (0..watchedThrough), in this process. */
  private watchedThrough = -1;
  private importing: Promise<void> = Promise.resolve();
  private readonly sender = new UtxoSender(this);
  private readonly sweeper = new UtxoSweeper(this, this.sender);

  constructor(
    readonly network: UtxoNetwork,
    readonly config: UtxoChainConfig,
    readonly context: ChainContext,
  ) {
    this.confirmations = config.confirmations ?? PAYMENT_CURRENCY_INFO[NATIVE_ASSET[network]].confirmations;
    this.pollMs = config.pollMs;
    this.asset = NATIVE_ASSET[network];
    this.account = parseExtendedPublicKey(config.xpub);
    this.test = config.chain !== 'main';
    this.spending = { input: SCRIPT_KIND[network], dustRelayFee: DUST_RELAY_FEE[network] };
    this.node = new BitcoinRpc(nodeEndpoint(config));
    this.wallet = this.node.wallet(config.wallet);
    this.logger = context.logger.child({ network });
    this.hotAddress = deriveChainAddress(this.account, network, HOT_WALLET.chain, HOT_WALLET.index, addressOptions(config.chain));
  }

  // --- setup ---

  connect(): Promise<void> {
    return this.ready();
  }

  /** The node checked and the wallet watching, once; again after a failure (an optional node that was down). */
  ready(): Promise<void> {
    this.setup ??= this.prepare().catch((e: unknown) => {
      this.setup = null;
      throw e;
    });
    return this.setup;
  }

  private async prepare(): Promise<void> {
    const signer = this.context.signer;
    if (signer && !signer.ownsAccount(this.network, this.test, this.account)) {
      const path = ACCOUNT_PATHS[this.network][this.test ? 'test' : 'main'];
      throw new Error(`the xpub in CHAINS_FILE is not the signer's account ${path}: the service could not spend what it receives (check SIGNER_MNEMONIC_FILE)`);
    }
    const chain = (await this.node.call<{ chain: string }>('getblockchaininfo')).chain;
    if (chain !== this.config.chain) throw new Error(`the node is on chain "${chain}", CHAINS_FILE says "${this.config.chain}"`);
    await this.openWallet();
    const { relayfee } = await this.node.call<{ relayfee: unknown }>('getnetworkinfo');
    this.relayRate = perVbyte(coins(relayfee));
    await this.watchHotWallet();
    await this.findWatched();
  }

  /** Loads the configured wallet, creating it watch-only (no private keys, blank) when the node has none of that name. */
  private async openWallet(): Promise<void> {
    const name = this.config.wallet;
    const loaded = await this.node.call<string[]>('listwallets');
    if (!loaded.includes(name)) {
      try {
        await this.node.call('loadwallet', [name]);
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        if (e.code !== RPC_ERROR.WALLET_ALREADY_LOADED) {
          if (e.code !== RPC_ERROR.WALLET_NOT_FOUND) throw new Error(`the node cannot load its wallet "${name}": ${e.reason}`);
          await this.createWallet(name);
        }
      }
    }
    const info = await this.wallet.call<{ private_keys_enabled: boolean; descriptors?: boolean }>('getwalletinfo');
    this.descriptorWallet = info.descriptors === true;
    if (info.private_keys_enabled) {
      this.logger.warn({ wallet: name }, 'the node wallet holds private keys: Payrail only needs (and expects) a watch-only wallet; its own coins are ignored');
    }
  }

  /**
   * A legacy wallet (what Litecoin Core 0.21 and Bitcoin Core before v26 create); a node that no longer creates those
   * (Bitcoin Core v26+) gets a descriptor wallet, both watch-only and blank.
   */
  private async createWallet(name: string): Promise<void> {
    try {
      await this.node.call('createwallet', [name, true, true, '', false, false]);
      this.logger.info({ wallet: name }, 'created a watch-only (legacy) wallet on the node');
    } catch (legacy) {
      if (!(legacy instanceof RpcError)) throw legacy;
      try {
        await this.node.call('createwallet', [name, true, true, '', false, true]);
        this.logger.info({ wallet: name }, 'created a watch-only descriptor wallet on the node');
      } catch (descriptor) {
        throw new Error(`the node cannot create the wallet "${name}": ${legacy.reason}; as a descriptor wallet: ${(descriptor as Error).message}`);
      }
    }
  }

  private receivingAddress(index: number): string {
    return deriveAddress(this.account, this.network, index, addressOptions(this.config.chain));
  }

  private async isWatched(address: string): Promise<boolean> {
    const info = await this.wallet.call<{ ismine: boolean; iswatchonly?: boolean }>('getaddressinfo', [address]);
    return info.ismine || info.iswatchonly === true;
  }

  /** The hot wallet's chain. A wallet that never watched it rescans from our first send (it may hold coins already). */
  private async watchHotWallet(): Promise<void> {
    if (await this.isWatched(this.hotAddress)) return;
    const first = await this.context.db.chainSend.findFirst({ where: { network: this.network }, orderBy: { createdAt: 'asc' } });
    await this.importRange(HOT_WALLET.chain, HOT_WALLET.index, HOT_WALLET.index, first ? unixSeconds(first.createdAt) : 'now');
  }

  /**
   * How far the node watches our receiving chain (imports go from index 0 upwards, so a binary search finds the
   * first index it does not watch), then watches `lookahead` addresses beyond the last one handed out. Addresses
   * handed out but not watched (a new wallet, another node) are imported with a rescan from when the first of them
   * was handed out, so no payment to them is missed.
   */
  private async findWatched(): Promise<void> {
    const highest = await highestIndex(this.context.db, this.network);
    const target = highest + this.config.lookahead;
    let [low, high] = [0, target];
    if (await this.isWatched(this.receivingAddress(target))) low = high = target + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (await this.isWatched(this.receivingAddress(middle))) low = middle + 1;
      else high = middle;
    }
    const firstUnwatched = low;
    if (firstUnwatched <= highest) {
      const handedOut = await this.context.db.derivedAddress.findUnique({ where: { network_index: { network: this.network, index: firstUnwatched } } });
      this.logger.warn({ from: firstUnwatched, through: highest }, 'the node did not watch addresses already handed out: importing them with a rescan');
      await this.importRange(0, firstUnwatched, target, handedOut ? unixSeconds(handedOut.createdAt) : 0);
    } else if (firstUnwatched <= target) {
      await this.importRange(0, firstUnwatched, target, 'now');
    }
    this.watchedThrough = Math.max(this.watchedThrough, target);
  }

  /** Makes the node watch receiving indexes through `index` (in steps of `lookahead`), one import at a time. */
  private watchThrough(index: number): Promise<void> {
    if (index <= this.watchedThrough) return Promise.resolve();
    const run = this.importing.then(async () => {
      if (index <= this.watchedThrough) return;
      const through = Math.max(index, this.watchedThrough + this.config.lookahead);
      await this.importRange(0, this.watchedThrough + 1, through, 'now');
      this.watchedThrough = through;
    });
    this.importing = run.catch(() => undefined);
    return run;
  }

  private async importRange(chain: 0 | 1, from: number, to: number, timestamp: ImportRequest['timestamp']): Promise<void> {
    const desc = chainDescriptor(this.network, this.account, this.test, chain);
    for (let start = from; start <= to; start += IMPORT_CHUNK) {
      const end = Math.min(to, start + IMPORT_CHUNK - 1);
      // One rescan, by the last call: it reads the past blocks for every script of the wallet, earlier chunks' too.
      const since = end === to ? timestamp : 'now';
      const request = importRequestFor({ desc, range: [start, end], timestamp: since, internal: chain === 1 }, this.descriptorWallet);
      const method = this.descriptorWallet ? 'importdescriptors' : 'importmulti';
      const params = this.descriptorWallet ? [[request]] : [[request], { rescan: since !== 'now' }];
      const [result] = await this.wallet.call<{ success: boolean; error?: { message: string } }[]>(method, params, since === 'now' ? undefined : RESCAN_TIMEOUT_MS);
      if (!result?.success) throw new Error(`the node did not import ${desc} [${request['range']}]: ${result?.error?.message ?? 'no answer'}`);
    }
  }

  // --- receiving ---

  isValidAddress(address: string): boolean {
    return validateAddress(ADDRESS_FORMAT[this.network], address, addressOptions(this.config.chain));
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    if (request.paymentCurrency !== this.asset) throw new Error(`${this.network} receives only ${this.asset}, not ${request.paymentCurrency}`);
    await this.ready();
    const { index, address } = await allocateIndex(this.context.db, this.network, request.ownerId, (i) => this.receivingAddress(i));
    // Never hand out an address the node does not watch: a failed import fails the allocation.
    await this.watchThrough(index + this.config.lookahead);
    return { address, tag: null };
  }

  async initialState(): Promise<UtxoScanState> {
    await this.ready();
    // A few blocks back, so that a payment in the tip block at the very first start is listed too.
    const tip = await this.node.call<number>('getblockcount');
    const height = Math.max(0, tip - this.confirmations);
    return { block: await this.node.call<string>('getblockhash', [height]), height, sweptAt: null };
  }

  async scan(state: UtxoScanState): Promise<UtxoScanState> {
    await this.ready();
    await this.watchThrough((await highestIndex(this.context.db, this.network)) + this.config.lookahead);
    const since = await this.listSince(state);
    const covered = await this.reportObserved(await this.observedReceives([...since.transactions, ...(since.removed ?? [])]));
    await this.followSeen(covered);
    await this.sender.followSends();
    const sweptAt = await this.sweeper.sweepIfDue(state.sweptAt);
    const { height } = await this.node.call<{ height: number }>('getblockheader', [since.lastblock]);
    return { block: since.lastblock, height, sweptAt };
  }

  /** What happened since the cursor; lastblock is `confirmations - 1` below the tip (what is not final is listed again). */
  private async listSince(state: UtxoScanState): Promise<SinceBlock> {
    const list = (block: string) => this.wallet.call<SinceBlock>('listsinceblock', [block, this.confirmations, true, true]);
    try {
      return await list(state.block);
    } catch (e) {
      if (!(e instanceof RpcError && e.code === RPC_ERROR.INVALID_ADDRESS_OR_KEY)) throw e;
      // The node does not know our block (it synced anew): resume at the same height of its chain, less a margin.
      const tip = await this.node.call<number>('getblockcount');
      const height = Math.max(0, Math.min(state.height, tip) - this.confirmations);
      this.logger.warn({ block: state.block, height }, 'the node does not know the block the last scan ended at: resuming from the same height on its chain');
      return list(await this.node.call<string>('getblockhash', [height]));
    }
  }

  /** Receives to our derived addresses, one per output (an output listed twice keeps its latest count). */
  private async observedReceives(entries: WalletEntry[]): Promise<Observed[]> {
    const receives = entries.filter((e) => e.category === 'receive' && e.address !== undefined);
    const ours = await derivedAmong(this.context.db, this.network, receives.map((e) => e.address!));
    const byOutput = new Map<string, Observed>();
    for (const e of receives) {
      if (!ours.has(e.address!)) continue;
      const key = outpoint(e.txid, e.vout);
      // `transactions` come before `removed`: the first listing of an output is the current one.
      if (!byOutput.has(key)) {
        byOutput.set(key, { txid: e.txid, vout: e.vout, address: e.address!, amount: coins(e.amount), confirmations: e.confirmations, blockheight: e.blockheight ?? null });
      }
    }
    return [...byOutput.values()];
  }

  /** Reports what changed of the observed outputs; answers the outputs it looked at. */
  private async reportObserved(observed: Observed[]): Promise<Set<string>> {
    const known = await this.knownTransfers(observed.map((o) => o.txid));
    await inParallel(observed, REPORT_CONCURRENCY, (o) => this.follow(o, known.get(outpoint(o.txid, o.vout))));
    return new Set(observed.map((o) => outpoint(o.txid, o.vout)));
  }

  private async knownTransfers(txids: string[]): Promise<Map<string, KnownTransfer & { amount: Decimal; toAddress: string }>> {
    if (txids.length === 0) return new Map();
    const rows = await this.context.db.chainTransfer.findMany({
      where: { network: this.network, txHash: { in: [...new Set(txids)] } },
      select: { txHash: true, outputIndex: true, state: true, confirmations: true, amount: true, toAddress: true },
    });
    return new Map(rows.map((r) => [outpoint(r.txHash, r.outputIndex), { state: r.state, confirmations: r.confirmations, amount: toMoney(r.amount), toAddress: r.toAddress }]));
  }

  /** One output: report it, report it dropped, or tell the operator what cannot be undone automatically. */
  private async follow(o: Observed, known: KnownTransfer | undefined): Promise<void> {
    const step = incomingStep(known, o.confirmations, this.confirmations);
    const where = { txHash: o.txid, outputIndex: o.vout, address: o.address, confirmations: o.confirmations };
    switch (step) {
      case 'report':
      case 'drop':
        return this.deliver({
          network: this.network,
          asset: this.asset,
          txHash: o.txid,
          outputIndex: o.vout,
          from: null,
          to: o.address,
          tag: null,
          amount: o.amount,
          confirmations: Math.max(0, o.confirmations),
          blockNumber: o.blockheight === null ? null : BigInt(o.blockheight),
          dropped: step === 'drop',
        });
      case 'credited-lost':
        this.logger.error(
          { ...where, credited: known!.confirmations },
          'a credited payment lost its confirmations in a reorg: the credit stays (it cannot be undone automatically); see docs/chains-utxo.md, "A reorg after a payment counted"',
        );
        return;
      case 'dropped-back':
        this.logger.error(where, 'a payment recorded as dropped is in the chain again: it arrived but does not count; see docs/chains-utxo.md, "A dropped payment that comes back"');
        return;
      case 'none':
        return;
    }
  }

  /** A report to the payments feature. Its refusals (unknown address, conflicting report) are logged, not retried. */
  private async deliver(report: TransferReport): Promise<void> {
    try {
      await this.context.report(report);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      this.logger.error({ err: e, txHash: report.txHash, outputIndex: report.outputIndex, to: report.to }, 'a transfer report was refused; it is skipped');
    }
  }

  /**
   * Transfers still `seen` that the listing did not cover (their block is below the cursor: the required
   * confirmations were raised, or the wallet was replaced): asked for one by one.
   */
  private async followSeen(covered: Set<string>): Promise<void> {
    const seen = await this.context.db.chainTransfer.findMany({
      where: { network: this.network, state: 'seen' },
      select: { txHash: true, outputIndex: true, confirmations: true, amount: true, toAddress: true },
    });
    const open = seen.filter((t) => !covered.has(outpoint(t.txHash, t.outputIndex)));
    if (open.length === 0) return;
    const statuses = await this.txStatuses(open.map((t) => t.txHash));
    await inParallel(open, REPORT_CONCURRENCY, async (t) => {
      const status = statuses.get(t.txHash);
      if (!status) {
        this.logger.warn({ txHash: t.txHash }, 'the node knows nothing of a transaction we follow (a wallet replaced?)');
        return;
      }
      const observed = { txid: t.txHash, vout: t.outputIndex, address: t.toAddress, amount: toMoney(t.amount), ...status };
      await this.follow(observed, { state: 'seen', confirmations: t.confirmations });
    });
  }

  /** What the node says of each transaction: the wallet's view, else the chain's (txindex) or the mempool's. */
  async txStatuses(txids: string[]): Promise<Map<string, TxStatus>> {
    const unique = [...new Set(txids)];
    const statuses = new Map<string, TxStatus>();
    const fromWallet = await this.wallet.batch<{ confirmations: number; blockheight?: number }>(unique.map((txid) => ({ method: 'gettransaction', params: [txid, true] })));
    const unknown: string[] = [];
    fromWallet.forEach((r, i) => {
      if (r instanceof RpcError) {
        if (r.code !== RPC_ERROR.INVALID_ADDRESS_OR_KEY) throw r;
        unknown.push(unique[i]!);
      } else statuses.set(unique[i]!, { confirmations: r.confirmations, blockheight: r.blockheight ?? null });
    });
    if (unknown.length === 0) return statuses;
    const tip = await this.node.call<number>('getblockcount');
    const fromChain = await this.node.batch<{ confirmations?: number }>(unknown.map((txid) => ({ method: 'getrawtransaction', params: [txid, true] })));
    fromChain.forEach((r, i) => {
      if (r instanceof RpcError) return;
      const confirmations = r.confirmations ?? 0;
      statuses.set(unknown[i]!, { confirmations, blockheight: confirmations > 0 ? tip - confirmations + 1 : null });
    });
    return statuses;
  }

  // --- custody ---

  /**
   * Confirmed balances (as deep as a payment must be) of our receiving addresses, from the watch-only wallet. Outputs
   * that an open send of ours spends are counted until that send is final, as our records do.
   */
  async watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    await this.ready();
    const wanted = new Set(addresses.filter((a) => this.isValidAddress(a)));
    const chunks: string[][] = [];
    for (let i = 0; i < wanted.size; i += BALANCE_CHUNK) chunks.push([...wanted].slice(i, i + BALANCE_CHUNK));
    const unspent = (await this.wallet.batchAll<Unspent[]>(chunks.map((chunk) => ({ method: 'listunspent', params: [this.confirmations, 9_999_999, chunk] })))).flat();
    const totals = new Map<string, Decimal>();
    const add = (address: string, amount: Decimal) => totals.set(address, (totals.get(address) ?? new Money(0)).plus(amount));
    const listed = new Set<string>();
    for (const u of unspent) {
      listed.add(outpoint(u.txid, u.vout));
      if (u.address && wanted.has(u.address)) add(u.address, coins(u.amount));
    }
    for (const send of await openSends(this.context.db, this.network)) {
      for (const input of sendInputs(send.inputs)) {
        if (wanted.has(input.address) && input.txid !== undefined && !listed.has(outpoint(input.txid, input.vout ?? -1))) add(input.address, toMoney(input.amount));
      }
    }
    return [...totals].map(([address, amount]) => ({ address, asset: this.asset, amount: amount.toFixed() }));
  }

  // --- sending (sender.ts) and consolidation (sweeps.ts) ---

  /**
   * Pays a withdrawal or a refund from the hot wallet (its confirmed coins; change back to it). Idempotent per id: a
   * send stored before is offered to the node again and answers the same transaction.
   */
  send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    return this.sender.send(transfer);
  }

  sendRefusal(): string | null {
    return this.sender.sendRefusal();
  }
}

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Runs `fn` over `items`, at most `limit` at once; the first failure is thrown once all have settled. */
async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item).catch((e: unknown) => errors.push(e));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length) throw errors[0];
}
