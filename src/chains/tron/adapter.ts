// Tron through its HTTP API (java-tron's /wallet endpoints, which TronGrid and every full node serve; docs/chains-http.md).
// Receiving: one address per payment, derived watch-only from the account's xpub. Scanning reads blocks in order,
// each with its transactions (/wallet/getblockbynum: TRX transfers) and their results (/wallet/gettransactioninfobyblocknum:
// TRC-20 Transfer logs), so its cost does not grow with the number of addresses watched, and it sees a reorg through
// the blocks' parent hashes. Sending: the API builds the transaction, we check its bytes, sign its txID with the hot
// wallet's key, store it, then broadcast it.
import type { HDKey } from '@scure/bip32';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { PAYMENT_CURRENCY_INFO, type Network, type PaymentCurrency } from '../../domain/assets.ts';
import { toMoney } from '../../domain/money.ts';
import { AppError } from '../../errors/app-error.ts';
import type { AddressRequest, AllocatedAddress, OutgoingTransfer, TransferReport } from '../adapter.ts';
import { encodeAddress, tronAccountBytes, validateAddress } from '../address-formats.ts';
import { reportOf } from '../block-scan.ts';
import type { TronChainConfig } from '../config.ts';
import type { AddressBalance } from '../custody.ts';
import { addressOfPublicKey, deriveAddress, parseExtendedPublicKey } from '../hd.ts';
import { HttpApi, integerOf } from '../http.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import type { ChainContext, NodeAdapter } from '../node-adapter.ts';
import { HOT_WALLET, signerRefusal } from '../signer.ts';
import { allocateIndex, findSend, isReported, openSends, replaceSend, storeSend, updateSend, WatchedSet } from '../store.ts';
import { fromBaseUnits, toBaseUnits } from '../units.ts';
import { deliverReport } from '../watch.ts';
import { CONTRACT_TYPE, decodeRaw, decodeTransfer, decodeTrigger, encodeRawJson } from './protobuf.ts';

/** keccak-256 of Transfer(address,address,uint256): topic 0 of every TRC-20 transfer log. */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** transfer(address,uint256) */
const TRANSFER_SELECTOR = 'a9059cbb';
/** Blocks one scan reads at most (a backlog takes several scans; each stays well inside the watcher's lease). */
const BLOCKS_PER_SCAN = 100;
const PARALLEL_REQUESTS = 4;
/** Block ids kept to find where a reorg forked; Tron blocks are final (solidified) 19 blocks deep. */
const RECENT_BLOCKS = 40;
/**
 * A transaction not on chain is given up only this long after its expiration, by the head block's clock: no block
 * after the expiration takes it, and the margin covers an API whose nodes lag behind each other.
 */
const EXPIRY_MARGIN_MS = 60_000;
/** The most TRX (in sun) a TRC-20 send may burn for energy. */
const FEE_LIMIT_SUN = 100_000_000n;
const TRX_DECIMALS = PAYMENT_CURRENCY_INFO.trx.decimals;

type TronAsset = Extract<PaymentCurrency, 'trx' | 'trc20usdt'>;

/** A transfer to one of our addresses, reported but not final yet. */
interface PendingTransfer {
  txHash: string;
  outputIndex: number;
  asset: TronAsset;
  from: string | null;
  to: string;
  /** In units of the asset. */
  amount: string;
  /** Null while its block was replaced by a reorg and it has not reappeared. */
  block: number | null;
  /** The transaction's expiration (ms): if not back on chain by then, it never will be. */
  expiration: number;
  /** Confirmations last reported. */
  reported: number;
}

export interface TronState {
  /** The next block to read. */
  next: number;
  /** Ids of the last blocks read, oldest first. */
  recent: { n: number; id: string }[];
  pending: PendingTransfer[];
}

interface Head {
  number: number;
  timestamp: number;
}

// The API's shapes, as far as they are read (java-tron HTTP API, visible=true: addresses in base58).
interface ApiBlock {
  blockID?: string;
  block_header?: { raw_data?: { number?: number; parentHash?: string; timestamp?: number } };
  transactions?: ApiTransaction[];
}
interface ApiTransaction {
  txID: string;
  raw_data: { contract?: { type: string; parameter: { value: Record<string, unknown> } }[]; expiration?: number };
  raw_data_hex: string;
  ret?: { contractRet?: string }[];
  signature?: string[];
}
interface ApiTransactionInfo {
  id?: string;
  blockNumber?: number;
  fee?: number;
  result?: string;
  receipt?: { result?: string };
  log?: { address: string; topics?: string[]; data?: string }[];
}
interface ApiConstantCall {
  result?: { result?: boolean; code?: string; message?: string };
  constant_result?: string[];
  transaction?: { ret?: { ret?: string }[] };
}
interface ApiBroadcast {
  result?: boolean;
  code?: string;
  /** Plain text: every call is made with visible=true (hex of the text otherwise). */
  message?: string;
}
/** A block read with its transactions' results, or why it cannot be read yet. */
type BlockRead = { n: number; block: ApiBlock; infos: ApiTransactionInfo[] } | { n: number; unsynced: string };

export function tronAdapter(network: Network, config: TronChainConfig, context: ChainContext): NodeAdapter<TronState> {
  return new TronAdapter(network, config, context);
}

class TronAdapter implements NodeAdapter<TronState> {
  readonly confirmations: number;
  readonly pollMs: number;
  private readonly api: HttpApi;
  private readonly account: HDKey;
  private readonly watched: WatchedSet;
  /** The USDT contract's 20 account bytes in hex, as logs name it; null when none is configured. */
  private readonly usdtHex: string | null;

  constructor(
    readonly network: Network,
    private readonly config: TronChainConfig,
    private readonly context: ChainContext,
  ) {
    this.confirmations = config.confirmations ?? PAYMENT_CURRENCY_INFO.trx.confirmations;
    this.pollMs = config.pollMs;
    this.api = new HttpApi(nodeEndpoint(config), { headers: config.apiKey ? { 'TRON-PRO-API-KEY': config.apiKey } : {} });
    this.account = parseExtendedPublicKey(config.xpub);
    // Addresses are handed out only if the signer could spend them (a process without the signer cannot check).
    if (context.signer && !context.signer.ownsAccount('tron', false, this.account)) {
      throw new Error(`${network}: the xpub in CHAINS_FILE is not the signer's Tron account (m/44'/195'/0'): payments to its addresses could not be spent`);
    }
    this.watched = new WatchedSet(context.db, network);
    this.usdtHex = config.usdtContract ? bytesToHex(tronAccountBytes(config.usdtContract)) : null;
  }

  isValidAddress(address: string): boolean {
    return validateAddress('tron', address);
  }

  sendRefusal(asset: PaymentCurrency): string | null {
    const noSigner = signerRefusal(this.context);
    if (noSigner) return noSigner;
    return asset === 'trc20usdt' && !this.config.usdtContract ? `no usdtContract is configured for ${this.network}` : null;
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    if (request.paymentCurrency === 'trc20usdt' && !this.usdtHex) {
      throw new AppError('SERVICE_UNAVAILABLE', `Payments in trc20usdt are unavailable: no usdtContract is configured for ${this.network}`);
    }
    const { address } = await allocateIndex(this.context.db, this.network, request.ownerId, (index) => deriveAddress(this.account, 'tron', index));
    return { address, tag: null };
  }

  async connect(): Promise<void> {
    await this.head();
    if (this.config.usdtContract) {
      const contract = await this.call<{ contract_address?: string }>('/wallet/getcontract', { value: this.config.usdtContract, visible: true });
      if (!contract.contract_address) throw new Error(`usdtContract ${this.config.usdtContract} is no contract on this chain`);
    }
  }

  async initialState(): Promise<TronState> {
    return { next: (await this.head()).number, recent: [], pending: [] };
  }

  async scan(state: TronState): Promise<TronState> {
    const head = await this.head();
    let { next } = state;
    const recent = [...state.recent];
    const pending = new Map(state.pending.map((p) => [pendingKey(p), { ...p }]));

    const lastToRead = Math.min(head.number, state.next + BLOCKS_PER_SCAN - 1);
    read: for (let from = state.next; from <= lastToRead; from += PARALLEL_REQUESTS) {
      const numbers = range(from, Math.min(from + PARALLEL_REQUESTS - 1, lastToRead));
      const blocks = await Promise.all(numbers.map((n) => this.blockWithInfo(n)));
      // Addresses after the blocks are read: anything paid in them was handed out (and written) before. Loaded
      // before, they would miss an address handed out meanwhile, and `next` would pass its payment.
      await this.watched.refresh();
      for (const read of blocks) {
        const { n } = read;
        if ('unsynced' in read) {
          // The API's backends are not all at the head yet: this block is read again by the next scan, never skipped.
          this.context.logger.warn({ network: this.network, block: n, why: read.unsynced }, 'a block cannot be read completely yet: read again at the next scan');
          break read;
        }
        const { block, infos } = read;
        const last = recent.at(-1);
        if (last && last.n === n - 1 && parentOf(block) !== last.id) {
          next = (await this.forkPoint(recent)) + 1;
          while ((recent.at(-1)?.n ?? -1) >= next) recent.pop();
          for (const p of pending.values()) if (p.block !== null && p.block >= next) p.block = null;
          this.context.logger.warn({ network: this.network, block: n, forkedAfter: next - 1 }, 'reorg: reading again from where the chain forked');
          break read;
        }
        // Reported as each block is read: a scan cut short has reported what it read (reports are idempotent).
        for (const found of this.transfersIn(block, infos)) {
          const p = pending.get(pendingKey(found)) ?? found;
          p.block = n;
          pending.set(pendingKey(p), p);
          await this.reportDepth(p, head, pending);
        }
        recent.push({ n, id: block.blockID! });
        if (recent.length > RECENT_BLOCKS) recent.shift();
        next = n + 1;
      }
    }

    for (const p of [...pending.values()]) {
      if (p.block !== null) await this.reportDepth(p, head, pending);
      else if (head.timestamp > p.expiration + EXPIRY_MARGIN_MS) {
        // Out of the chain since a reorg and past its expiration: it can never come back.
        await deliverReport(this.context.report, this.context.logger, reportOf(this.network, p, 0, true));
        pending.delete(pendingKey(p));
      }
    }
    await this.followSends(head);
    return { next, recent, pending: [...pending.values()] };
  }

  /** Reports `p` if it deepened since last reported; a final one is no longer followed. */
  private async reportDepth(p: PendingTransfer, head: Head, pending: Map<string, PendingTransfer>): Promise<void> {
    const confirmations = head.number - p.block! + 1;
    if (confirmations > p.reported) {
      await deliverReport(this.context.report, this.context.logger, reportOf(this.network, p, confirmations, false));
      p.reported = confirmations;
    }
    if (confirmations >= this.confirmations) pending.delete(pendingKey(p));
  }


  /** The transfers to our addresses in one block: TRX transfers, and USDT Transfer logs of successful calls. */
  private transfersIn(block: ApiBlock, infos: ApiTransactionInfo[]): PendingTransfer[] {
    const found: PendingTransfer[] = [];
    const expirations = new Map<string, number>();
    for (const tx of block.transactions ?? []) {
      expirations.set(tx.txID, tx.raw_data.expiration ?? 0);
      const contract = tx.raw_data.contract?.[0];
      if (contract?.type !== 'TransferContract' || tx.ret?.[0]?.contractRet !== 'SUCCESS') continue;
      const { to_address: to, owner_address: from, amount } = contract.parameter.value as { to_address: string; owner_address: string; amount: unknown };
      if (!this.watched.has(to)) continue;
      found.push(this.pending('trx', tx.txID, 0, from, to, integerOf(amount, 'a TRX amount'), tx.raw_data.expiration ?? 0));
    }
    if (!this.usdtHex) return found;
    for (const info of infos) {
      if (info.result === 'FAILED' || !info.id) continue;
      (info.log ?? []).forEach((log, index) => {
        const topics = log.topics ?? [];
        if (log.address.toLowerCase().slice(-40) !== this.usdtHex || topics.length !== 3 || topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return;
        const to = tronAddressOfWord(topics[2]!);
        if (!this.watched.has(to)) return;
        const amount = BigInt(`0x${log.data || '0'}`);
        found.push(this.pending('trc20usdt', info.id!, index, tronAddressOfWord(topics[1]!), to, amount, expirations.get(info.id!) ?? 0));
      });
    }
    return found;
  }

  private pending(asset: TronAsset, txHash: string, outputIndex: number, from: string, to: string, units: bigint, expiration: number): PendingTransfer {
    const amount = fromBaseUnits(units, PAYMENT_CURRENCY_INFO[asset].decimals).toFixed();
    return { txHash, outputIndex, asset, from, to, amount, block: null, expiration, reported: 0 };
  }

  /**
   * Block `n` and the results of all its transactions. A load-balanced API answers from backends that may be a block
   * or two behind the one that gave the head: the block may be missing (`{}`), or its results missing or partial
   * (`[]`, `{}`): then the block is not read yet, since reading it would skip its USDT transfers for good.
   */
  private async blockWithInfo(n: number): Promise<BlockRead> {
    const [block, infos] = await Promise.all([
      this.call<ApiBlock>('/wallet/getblockbynum', { num: n, visible: true }),
      this.call<unknown>('/wallet/gettransactioninfobyblocknum', { num: n }),
    ]);
    if (!block.blockID) return { n, unsynced: `no block ${n} yet` };
    if (block.block_header?.raw_data?.number !== n) throw new Error(`${this.api.where} answered another block for block ${n}`);
    const transactions = block.transactions ?? [];
    if (transactions.length === 0) return { n, block, infos: [] };
    if (!Array.isArray(infos)) return { n, unsynced: `no results of block ${n} yet (${this.api.endpoint.quote(JSON.stringify(infos), 80)})` };
    const known = new Set((infos as ApiTransactionInfo[]).map((i) => i.id));
    const missing = transactions.filter((tx) => !known.has(tx.txID)).length;
    if (missing > 0) return { n, unsynced: `results of ${missing} of the ${transactions.length} transactions of block ${n} missing` };
    return { n, block, infos: infos as ApiTransactionInfo[] };
  }

  private async block(n: number): Promise<ApiBlock> {
    const block = await this.call<ApiBlock>('/wallet/getblockbynum', { num: n, visible: true });
    if (!block.blockID || block.block_header?.raw_data?.number !== n) throw new Error(`${this.api.where} has no block ${n}`);
    return block;
  }

  /**
   * A call to java-tron, which answers most failures with HTTP 200 and `{"Error": "..."}`: that is an error, never
   * an empty or "not found" answer.
   */
  private async call<T>(path: string, body: unknown): Promise<T> {
    const answer = await this.api.post(path, body);
    if (answer !== null && typeof answer === 'object' && !Array.isArray(answer) && 'Error' in answer) {
      throw new Error(`POST ${path} at ${this.api.where} failed: ${this.api.endpoint.quote(String((answer as { Error: unknown }).Error))}`);
    }
    return answer as T;
  }

  /** The newest block read before that is still on the chain; throws when the reorg is deeper than what is kept. */
  private async forkPoint(recent: TronState['recent']): Promise<number> {
    for (const known of [...recent].reverse()) {
      if ((await this.block(known.n)).blockID === known.id) return known.n;
    }
    throw new Error(`a reorg deeper than the last ${recent.length} blocks read: an operator must look at it`);
  }

  private async head(): Promise<Head> {
    const block = await this.call<ApiBlock>('/wallet/getnowblock', {});
    const raw = block.block_header?.raw_data;
    if (typeof raw?.number !== 'number' || typeof raw.timestamp !== 'number') throw new Error(`${this.api.where} answered no current block`);
    return { number: raw.number, timestamp: raw.timestamp };
  }

  // --- sending ---

  private hotWalletAddress: string | null = null;

  /** Where withdrawals and refunds are paid from: the signer's hot wallet key. */
  private get hotWallet(): string {
    const signer = this.context.signer;
    if (!signer) throw new AppError('SERVICE_UNAVAILABLE', `Sending on ${this.network} needs the signer, which this process does not hold`);
    return (this.hotWalletAddress ??= signer.address('tron', false, HOT_WALLET));
  }

  async send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    const stored = await findSend(this.context.db, transfer.id);
    if (stored?.status === 'confirmed' || stored?.status === 'failed') return { txHash: stored.txHash };
    if (stored) return this.broadcast(stored.id, stored.rawTx, transfer);
    const signed = await this.build(transfer);
    const row = await storeSend(this.context.db, {
      id: transfer.id,
      network: this.network,
      purpose: transfer.purpose,
      asset: transfer.asset,
      fromAddress: this.hotWallet,
      toAddress: transfer.to,
      tag: null,
      amount: transfer.amount.toFixed(),
      rawTx: JSON.stringify(signed),
      txHash: signed.txID,
      nonce: null,
    });
    // A concurrent send of the same id may have stored its transaction first: that one goes out.
    return this.broadcast(row.id, row.rawTx, transfer);
  }

  /** Broadcasts the stored transaction; one that expired before it reached the chain is replaced by a new one. */
  private async broadcast(id: string, rawTx: string, transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    const tx = JSON.parse(rawTx) as ApiTransaction;
    // java-tron serialises raw_data again (raw_data_hex is not read): build() checked it gives the bytes signed.
    const answer = await this.call<ApiBroadcast>('/wallet/broadcasttransaction', { ...tx, visible: true });
    if (answer.result === true || answer.code === 'DUP_TRANSACTION_ERROR') {
      await updateSend(this.context.db, id, { status: 'sent' });
      return { txHash: tx.txID };
    }
    if (answer.code === 'TRANSACTION_EXPIRATION_ERROR' && (await this.expiredOffChain(tx))) {
      const fresh = await this.build(transfer);
      await replaceSend(this.context.db, id, tx.txID, { rawTx: JSON.stringify(fresh), txHash: fresh.txID });
      // Whichever replacement was stored (this one, or a concurrent send's) goes out.
      const row = (await findSend(this.context.db, id))!;
      if (row.txHash !== tx.txID) return this.broadcast(id, row.rawTx, transfer);
    }
    throw new Error(`${this.api.where} refused transaction ${tx.txID}: ${answer.code ?? 'no result'} ${this.api.endpoint.quote(answer.message ?? '')}`);
  }

  /** The transaction built by the API, checked to be exactly `transfer`, signed by the hot wallet. */
  private async build(transfer: OutgoingTransfer): Promise<ApiTransaction> {
    const from = this.hotWallet;
    if (!this.isValidAddress(transfer.to)) throw new AppError('VALIDATION_FAILED', `${transfer.to} is not a Tron address`);
    const units = toBaseUnits(transfer.amount, PAYMENT_CURRENCY_INFO[transfer.asset].decimals);
    let tx: ApiTransaction;
    if (transfer.asset === 'trx') {
      if (units > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${transfer.amount.toFixed()} TRX is more than one transaction carries here`);
      tx = await this.call<ApiTransaction>('/wallet/createtransaction', { owner_address: from, to_address: transfer.to, amount: Number(units), visible: true });
    } else if (transfer.asset === 'trc20usdt' && this.config.usdtContract) {
      const answer = await this.call<{ result?: { result?: boolean; code?: string; message?: string }; transaction?: ApiTransaction }>('/wallet/triggersmartcontract', {
        owner_address: from,
        contract_address: this.config.usdtContract,
        function_selector: 'transfer(address,uint256)',
        parameter: transferParameter(transfer.to, units),
        fee_limit: Number(FEE_LIMIT_SUN),
        call_value: 0,
        visible: true,
      });
      if (!answer.result?.result || !answer.transaction) throw new Error(`${this.api.where} would not build the transfer: ${answer.result?.code ?? ''} ${this.api.endpoint.quote(answer.result?.message ?? '')}`);
      tx = answer.transaction;
    } else {
      throw new AppError('SERVICE_UNAVAILABLE', `Sending ${transfer.asset} on ${this.network} is not possible: no usdtContract is configured`);
    }
    if (!tx.txID || !tx.raw_data_hex) throw new Error(`${this.api.where} built no transaction: ${this.api.endpoint.quote(JSON.stringify(tx))}`);
    this.checkBuilt(tx, transfer, from, units);
    return { ...tx, signature: [this.sign(tx.txID)] };
  }

  /** The bytes we sign must say what we asked for: its txID is their hash, and they move exactly this amount there. */
  private checkBuilt(tx: ApiTransaction, transfer: OutgoingTransfer, from: string, units: bigint): void {
    const raw = hexToBytes(tx.raw_data_hex);
    const refuse = (why: string) => {
      throw new Error(`${this.api.where} built a transaction that is not the one asked for (${why}): not signed`);
    };
    if (bytesToHex(sha256(raw)) !== tx.txID.toLowerCase()) refuse('its txID is not the hash of its raw data');
    // What the node verifies the signature against is raw_data serialised again, not raw_data_hex: the two must agree.
    let fromJson: Uint8Array;
    try {
      fromJson = encodeRawJson(tx.raw_data, tronAccountBytes);
    } catch (e) {
      return refuse(`its raw_data cannot be checked: ${(e as Error).message}`);
    }
    if (!equal(fromJson, raw)) refuse('its raw_data is not its raw_data_hex');
    const decoded = decodeRaw(raw);
    if (decoded.contracts.length !== 1) refuse('not exactly one contract');
    const [contract] = decoded.contracts as [(typeof decoded.contracts)[number]];
    const owner = tronBytes(from);
    if (transfer.asset === 'trx') {
      if (contract.type !== CONTRACT_TYPE.TransferContract) refuse('not a TRX transfer');
      const t = decodeTransfer(contract.value);
      if (!equal(t.owner, owner) || !equal(t.to, tronBytes(transfer.to)) || t.amount !== units) refuse('another sender, receiver or amount');
    } else {
      if (contract.type !== CONTRACT_TYPE.TriggerSmartContract) refuse('not a contract call');
      const t = decodeTrigger(contract.value);
      const data = TRANSFER_SELECTOR + transferParameter(transfer.to, units);
      if (!equal(t.owner, owner) || !equal(t.contract, tronBytes(this.config.usdtContract!)) || bytesToHex(t.data) !== data) refuse('another sender, contract or call');
      if (t.callValue !== 0n || t.callTokenValue !== 0n) refuse('it also sends TRX or tokens');
      if (decoded.feeLimit > FEE_LIMIT_SUN) refuse('a higher fee limit');
    }
  }

  /** A recoverable signature of the txID, r || s || v with v = 27 + recovery id, as java-tron and TronWeb write it. */
  private sign(txID: string): string {
    const digest = hexToBytes(txID);
    const compact = this.context.signer!.signDigest('tron', HOT_WALLET, digest);
    const signature = secp256k1.Signature.fromBytes(compact, 'compact');
    const hot = this.hotWallet;
    for (const recovery of [0, 1]) {
      const key = signature.addRecoveryBit(recovery).recoverPublicKey(digest).toBytes(true);
      if (addressOfPublicKey('tron', key) === hot) return bytesToHex(compact) + (27 + recovery).toString(16);
    }
    throw new Error('the signature does not recover to the hot wallet');
  }

  /** Whether `tx` is not on chain and never can be: the head block is past its expiration (and the margin). */
  private async expiredOffChain(tx: ApiTransaction): Promise<boolean> {
    const head = await this.head();
    if (head.timestamp <= expirationOf(tx) + EXPIRY_MARGIN_MS) return false;
    return !(await this.call<ApiTransactionInfo>('/wallet/gettransactioninfobyid', { value: tx.txID })).id;
  }

  /** Our sends: final (confirmed, or failed on chain) once deep enough; failed too when expired before reaching it. */
  private async followSends(head: Head): Promise<void> {
    for (const send of await openSends(this.context.db, this.network)) {
      let info: ApiTransactionInfo;
      try {
        info = await this.call<ApiTransactionInfo>('/wallet/gettransactioninfobyid', { value: send.txHash });
      } catch (e) {
        // Not an answer about the transaction: it stays open (an error is never "not on chain", which could fail it).
        this.context.logger.warn({ err: e, id: send.id, txHash: send.txHash }, 'an outgoing transaction could not be looked up; tried again at the next scan');
        continue;
      }
      let outcome: 'confirmed' | 'failed';
      if (info.id && typeof info.blockNumber === 'number') {
        if (head.number - info.blockNumber + 1 < this.confirmations) continue;
        const reverted = info.result === 'FAILED' || (info.receipt?.result !== undefined && info.receipt.result !== 'SUCCESS');
        outcome = reverted ? 'failed' : 'confirmed';
      } else {
        if (head.timestamp <= expirationOf(JSON.parse(send.rawTx) as ApiTransaction) + EXPIRY_MARGIN_MS) continue;
        outcome = 'failed';
      }
      try {
        if (isReported(send.purpose)) await this.context.reportOutgoing({ network: this.network, purpose: send.purpose, id: send.id, txHash: send.txHash, outcome });
      } catch (e) {
        // Not recorded as sent yet (the sender is still at it): the next scan reports again.
        if (e instanceof AppError && e.code === 'CONFLICT') {
          this.context.logger.debug({ err: e, id: send.id }, 'outgoing outcome not taken yet');
          continue;
        }
        throw e;
      }
      await updateSend(this.context.db, send.id, {
        status: outcome,
        ...(info.blockNumber !== undefined ? { blockNumber: BigInt(info.blockNumber) } : {}),
        fee: fromBaseUnits(integerOf(info.fee ?? 0, 'a fee'), TRX_DECIMALS).toFixed(),
      });
    }
  }

  // --- custody ---

  /** Solidified balances (TRX and USDT) of the addresses, as the custody check compares them with the records. */
  async watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    const balances: AddressBalance[] = [];
    for (const address of addresses) {
      // `{}` is an account that does not exist (never paid): 0. An error is an error, not 0.
      const account = await this.call<{ balance?: unknown }>('/walletsolidity/getaccount', { address, visible: true });
      balances.push({ address, asset: 'trx', amount: fromBaseUnits(integerOf(account.balance ?? 0, 'a balance'), TRX_DECIMALS).toFixed() });
      if (!this.config.usdtContract) continue;
      const answer = await this.call<ApiConstantCall>('/walletsolidity/triggerconstantcontract', {
        owner_address: address,
        contract_address: this.config.usdtContract,
        function_selector: 'balanceOf(address)',
        parameter: word(tronBytes(address)),
        visible: true,
      });
      const result = answer.constant_result?.[0];
      // A call that failed (no contract, a revert, the node's own error) answers no word, or not a balance: an error.
      if (answer.result?.result !== true || answer.transaction?.ret?.[0]?.ret === 'FAILED' || typeof result !== 'string' || !/^[0-9a-fA-F]{64}$/.test(result)) {
        throw new Error(`${this.api.where} could not read the USDT balance of ${address}: ${answer.result?.code ?? 'no result'} ${this.api.endpoint.quote(answer.result?.message ?? '')}`);
      }
      const units = BigInt(`0x${result}`);
      balances.push({ address, asset: 'trc20usdt', amount: fromBaseUnits(units, PAYMENT_CURRENCY_INFO.trc20usdt.decimals).toFixed() });
    }
    return balances;
  }
}

/** When a transaction expires, from the bytes that were signed. */
const expirationOf = (tx: ApiTransaction) => Number(decodeRaw(hexToBytes(tx.raw_data_hex)).expiration);
const pendingKey = (p: { txHash: string; outputIndex: number }) => `${p.txHash}:${p.outputIndex}`;
const parentOf = (block: ApiBlock) => block.block_header?.raw_data?.parentHash;
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The 21 bytes (0x41 prefix) a Tron address stands for, as contracts carry them. */
const tronBytes = (address: string) => Uint8Array.of(0x41, ...tronAccountBytes(address));
/** A 32-byte ABI word holding a Tron address's 20 account bytes. */
const word = (bytes21: Uint8Array) => bytesToHex(bytes21.subarray(1)).padStart(64, '0');
/** The Tron address in the low 20 bytes of a 32-byte word (a log topic). */
const tronAddressOfWord = (hex: string) => encodeAddress('tron', hexToBytes(hex.slice(-40)));
/** ABI arguments of transfer(address,uint256). */
const transferParameter = (to: string, units: bigint) => word(tronBytes(to)) + units.toString(16).padStart(64, '0');

