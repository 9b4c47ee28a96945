// Solana through its JSON-RPC API (docs/chains-http.md). Receiving: one wallet (CHAINS_FILE `address`); each payment
// gets a fresh reference key (Solana Pay: a random 32-byte key the payer's wallet adds to the transfer as a read-only
// account), answered as the payment's tag. The scan reads the wallet's signatures newest first down to where it
// stopped (getSignaturesForAddress), then the new transactions in one batch (getTransaction): the wallet's balance
// change is the amount, the one reference key of ours among the transaction's accounts names the payment. Reading the
// wallet's history costs the same whatever the number of open payments; polling each reference (Solana Pay's own way)
// would cost one call per open payment per poll. Confirmations follow the commitment: `confirmed` counts 1,
// `finalized` counts as final (FINALIZED_CONFIRMATIONS). Native SOL only. Sending is not supported: the signer holds
// secp256k1 keys only, and the receiving wallet is not one of its keys.
import { randomBytes } from 'node:crypto';
import { PAYMENT_CURRENCY_INFO, type Network } from '../../domain/assets.ts';
import { toMoney } from '../../domain/money.ts';
import { AppError } from '../../errors/app-error.ts';
import type { AddressRequest, AllocatedAddress, TransferReport } from '../adapter.ts';
import { encodeAddress, validateAddress } from '../address-formats.ts';
import type { SolanaChainConfig } from '../config.ts';
import type { AddressBalance } from '../custody.ts';
import { readHistory, type HistoryCursor, type HistoryPage } from '../history.ts';
import { integerOf, JsonRpc } from '../http.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import type { ChainContext, NodeAdapter } from '../node-adapter.ts';
import { allocateIndex, WatchedSet } from '../store.ts';
import { fromBaseUnits } from '../units.ts';
import { deliverReport } from '../watch.ts';

/** Signatures per page, and so transactions per getTransaction batch. */
const PAGE = 100;
const PAGES_PER_SCAN = 20;
/** getSignatureStatuses takes at most 256 signatures. */
const STATUS_BATCH = 256;
/**
 * What `finalized` counts as: a rooted block has 31 confirmed blocks on top (the vote lockout), so 32. A payment is
 * final at `finalized` whenever the network asks for more than one confirmation.
 */
const FINALIZED_CONFIRMATIONS = 32;
/**
 * Slots after which a transaction that left the chain can no longer come back: its blockhash is too old to be
 * accepted (MAX_PROCESSING_AGE).
 */
const BLOCKHASH_SLOTS = 150;
const DECIMALS = PAYMENT_CURRENCY_INFO.sol.decimals;

type Commitment = 'processed' | 'confirmed' | 'finalized';

interface Position {
  signature: string;
  slot: number;
}

/** A payment reported, not final yet. */
interface PendingPayment {
  signature: string;
  slot: number;
  from: string | null;
  reference: string;
  /** In SOL. */
  amount: string;
  reported: number;
}

export interface SolanaState {
  history: HistoryCursor<Position>;
  pending: PendingPayment[];
}

// JSON-RPC shapes, as far as they are read.
interface ApiSignature {
  signature: string;
  slot: number;
  err: unknown;
  confirmationStatus?: Commitment | null;
}
interface ApiTransaction {
  slot: number;
  meta: { err: unknown; preBalances: unknown[]; postBalances: unknown[]; loadedAddresses?: { writable?: string[]; readonly?: string[] } } | null;
  transaction: { message: { accountKeys: (string | { pubkey: string })[] }; signatures: string[] };
}
interface ApiStatus {
  slot: number;
  err: unknown;
  confirmationStatus?: Commitment | null;
}

export function solanaAdapter(network: Network, config: SolanaChainConfig, context: ChainContext): NodeAdapter<SolanaState> {
  return new SolanaAdapter(network, config, context);
}

class SolanaAdapter implements NodeAdapter<SolanaState> {
  readonly confirmations: number;
  readonly pollMs: number;
  private readonly rpc: JsonRpc;
  private readonly watched: WatchedSet;

  constructor(
    readonly network: Network,
    private readonly config: SolanaChainConfig,
    private readonly context: ChainContext,
  ) {
    this.confirmations = config.confirmations ?? PAYMENT_CURRENCY_INFO.sol.confirmations;
    this.pollMs = config.pollMs;
    this.rpc = new JsonRpc(nodeEndpoint(config));
    this.watched = new WatchedSet(context.db, network);
  }

  isValidAddress(address: string): boolean {
    return validateAddress('sol', address);
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    const { address: reference } = await allocateIndex(this.context.db, this.network, request.ownerId, () => encodeAddress('sol', randomBytes(32)));
    return { address: this.config.address, tag: reference };
  }

  sendRefusal(): string {
    return `sending on ${this.network} is not supported: the signer holds no key of the receiving wallet (docs/chains-http.md)`;
  }

  async send(): Promise<{ txHash: string }> {
    throw new AppError('SERVICE_UNAVAILABLE', `Sending on ${this.network} is not supported: the signer holds no key of the receiving wallet (docs/chains-http.md)`);
  }

  async connect(): Promise<void> {
    await this.rpc.call<number>('getSlot', [{ commitment: 'confirmed' }]);
  }

  async initialState(): Promise<SolanaState> {
    const [newest] = await this.signatures({ limit: 1 });
    return { history: { floor: newest ? { signature: newest.signature, slot: newest.slot } : null, backlog: null }, pending: [] };
  }

  async scan(state: SolanaState): Promise<SolanaState> {
    const pending = new Map(state.pending.map((p) => [p.signature, { ...p }]));
    const history = await readHistory(
      {
        // References after each page: a transaction the page lists was paid, so its reference handed out (and
        // written), before the page was read. References loaded before it would miss one handed out meanwhile, and the
        // cursor would pass it.
        page: async (below, floor) => {
          const page = await this.page(below, floor);
          await this.watched.refresh();
          return page;
        },
        position: (s: ApiSignature) => ({ signature: s.signature, slot: s.slot }),
        // A floor that left the chain is never met again: its slot still bounds the reading.
        reached: (s, floor) => s.signature === floor.signature || s.slot < floor.slot,
      },
      state.history,
      PAGES_PER_SCAN,
      async (signatures) => {
        const fresh = signatures.filter((s) => s.err === null && !pending.has(s.signature));
        const transactions = await this.rpc.batch<ApiTransaction | null>(
          fresh.map((s) => ({ method: 'getTransaction', params: [s.signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }] })),
        );
        for (const [i, s] of fresh.entries()) {
          const tx = transactions[i];
          // Listed but not readable yet (another node behind the API): the scan fails and reads it again.
          if (!tx) throw new Error(`${this.rpc.where} has no transaction ${s.signature} yet`);
          const payment = this.paymentIn(s.signature, tx);
          if (!payment) continue;
          const confirmations = this.confirmationsAt(s.confirmationStatus ?? 'confirmed');
          await deliverReport(this.context.report, this.context.logger, this.report(payment, confirmations, false));
          if (confirmations < this.confirmations) pending.set(payment.signature, { ...payment, reported: confirmations });
        }
      },
    );
    await this.follow(pending);
    return { history, pending: [...pending.values()] };
  }

  /** Payments not final yet: reported again as they deepen, dropped once gone for longer than a blockhash lives. */
  private async follow(pending: Map<string, PendingPayment>): Promise<void> {
    const open = [...pending.values()];
    for (let i = 0; i < open.length; i += STATUS_BATCH) {
      const batch = open.slice(i, i + STATUS_BATCH);
      const answer = await this.rpc.call<{ context: { slot: number }; value: (ApiStatus | null)[] }>('getSignatureStatuses', [
        batch.map((p) => p.signature),
        { searchTransactionHistory: true },
      ]);
      for (const [j, p] of batch.entries()) {
        const status = answer.value[j];
        if (!status || status.err !== null) {
          if (answer.context.slot > p.slot + BLOCKHASH_SLOTS) {
            await deliverReport(this.context.report, this.context.logger, this.report(p, 0, true));
            pending.delete(p.signature);
          }
          continue;
        }
        const confirmations = this.confirmationsAt(status.confirmationStatus ?? 'processed');
        if (confirmations > p.reported) {
          await deliverReport(this.context.report, this.context.logger, this.report({ ...p, slot: status.slot }, confirmations, false));
          p.reported = confirmations;
        }
        if (confirmations >= this.confirmations) pending.delete(p.signature);
      }
    }
  }

  /** The commitment as confirmations: processed 0, confirmed 1, finalized final. */
  private confirmationsAt(commitment: Commitment): number {
    if (commitment === 'finalized') return Math.max(this.confirmations, FINALIZED_CONFIRMATIONS);
    return commitment === 'confirmed' ? 1 : 0;
  }

  /** A payment to the wallet naming exactly one of our reference keys, or null. */
  private paymentIn(signature: string, tx: ApiTransaction): Omit<PendingPayment, 'reported'> | null {
    if (!tx.meta || tx.meta.err !== null) return null;
    const keys = [
      ...tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? k : k.pubkey)),
      ...(tx.meta.loadedAddresses?.writable ?? []),
      ...(tx.meta.loadedAddresses?.readonly ?? []),
    ];
    const index = keys.indexOf(this.config.address);
    if (index < 0) return null;
    const lamports = integerOf(tx.meta.postBalances[index], 'a balance') - integerOf(tx.meta.preBalances[index], 'a balance');
    if (lamports <= 0n) return null;
    const references = [...new Set(keys.filter((k) => this.watched.has(k)))];
    if (references.length === 0) {
      this.context.logger.debug({ network: this.network, signature }, 'incoming transfer without a reference of ours: ignored');
      return null;
    }
    if (references.length > 1) {
      // The balance change cannot be split between them: an operator decides.
      this.context.logger.warn({ network: this.network, signature, references }, 'incoming transfer names several references of ours: not credited');
      return null;
    }
    return { signature, slot: tx.slot, from: keys[0] ?? null, reference: references[0]!, amount: fromBaseUnits(lamports, DECIMALS).toFixed() };
  }

  private report(p: Omit<PendingPayment, 'reported'>, confirmations: number, dropped: boolean): TransferReport {
    return {
      network: this.network,
      asset: 'sol',
      txHash: p.signature,
      outputIndex: 0,
      from: p.from,
      // As handed out: payments are matched by the address string allocateAddress answered.
      to: this.config.address,
      tag: p.reference,
      amount: toMoney(p.amount),
      confirmations,
      blockNumber: BigInt(p.slot),
      dropped,
    };
  }

  private async page(below: Position | null, floor: Position | null): Promise<HistoryPage<ApiSignature>> {
    const items = await this.signatures({ limit: PAGE, before: below?.signature, until: floor?.signature });
    return { items, more: items.length === PAGE };
  }

  private signatures(options: { limit: number; before?: string | undefined; until?: string | undefined }): Promise<ApiSignature[]> {
    const config = Object.fromEntries(Object.entries({ ...options, commitment: 'confirmed' }).filter(([, v]) => v !== undefined));
    return this.rpc.call<ApiSignature[]>('getSignaturesForAddress', [this.config.address, config]);
  }

  /** Finalized balances of the addresses (the custody check asks for derived addresses, so none here). */
  async watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    const answers = await this.rpc.batch<{ value: unknown }>(addresses.map((a) => ({ method: 'getBalance', params: [a, { commitment: 'finalized' }] })));
    return addresses.map((address, i) => ({ address, asset: 'sol', amount: fromBaseUnits(integerOf(answers[i]!.value, 'a balance'), DECIMALS).toFixed() }));
  }
}
