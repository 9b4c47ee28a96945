// A fake Tron full node behind java-tron's HTTP API (/wallet, /walletsolidity; visible=true answers): blocks the test
// makes (TRX transfers and USDT TRC-20 transfers to any address), transactions built for sends as protobuf bytes
// (Transaction.raw) whose sha256 is the txID, broadcasts checked by recovering the signer from the signature, reorgs
// that take a transaction out, and transactions that fail on chain. Everything is independent of src/chains/.
import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { createBase58check } from '@scure/base';
import { fixture } from './fixtures.ts';

const base58check = createBase58check(sha256);
export const FAKE_USDT_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const FIRST_BLOCK = 61_141_681;
const GENESIS_MS = 1_714_060_800_000;
const BLOCK_MS = 3_000;
/** java-tron's default: a transaction is valid 60 s after the head block it was built on. */
const EXPIRATION_MS = 60_000;
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const TRANSFER_FEE_SUN = 13_844_850n;

export type TronTransferAsset = 'trx' | 'usdt';

export interface TronTransferSpec {
  asset: TronTransferAsset;
  to: string;
  /** Base units: sun for TRX, 10^-6 USDT. */
  units: bigint;
  from?: string;
}

interface FakeTx {
  txID: string;
  asset: TronTransferAsset;
  owner: string;
  to: string;
  units: bigint;
  rawHex: string;
  refBlockBytes: string;
  refBlockHash: string;
  expiration: number;
  timestamp: number;
  failed: boolean;
}

interface FakeBlock {
  number: number;
  id: string;
  parent: string;
  timestamp: number;
  txs: FakeTx[];
  /** Answers served for it (built once: the bench reads them many times). */
  json?: { block: string; infos: string };
}

export const randomTronAddress = () => base58check.encode(Uint8Array.of(0x41, ...randomBytes(20)));
const accountBytes = (address: string) => base58check.decode(address).subarray(1);
const addressOfAccountBytes = (hex: string) => base58check.encode(Uint8Array.of(0x41, ...hexToBytes(hex.slice(-40))));
const hexText = (text: string) => Buffer.from(text, 'utf8').toString('hex');

export class FakeTron {
  private readonly blocks: FakeBlock[] = [];
  /** Broadcast, waiting for the next block. */
  private pool: FakeTx[] = [];
  /** Transactions this node built (createtransaction, triggersmartcontract), by txID. */
  private readonly built = new Map<string, FakeTx>();
  private readonly failing = new Set<string>();
  /** Every accepted broadcast, with the address its signature recovers to. */
  readonly broadcasts: { txID: string; signer: string; to: string; units: bigint; asset: TronTransferAsset }[] = [];
  /** The next transactions built move the amount elsewhere than asked (a node that cannot be trusted). */
  tamperBuilds = false;
  /** The next transactions built say in their JSON raw_data another receiver than their raw_data_hex. */
  tamperJson = false;
  /** Answers to come instead of the real ones, per path (and block number): an API backend out of sync or failing. */
  private readonly overrides: { path: string; num?: number; answer: string; times: number }[] = [];
  /** Block numbers asked for with getblockbynum, in order. */
  readonly blockReads: number[] = [];
  private reorgs = 0;
  private builds = 0;

  constructor() {
    for (let i = 0; i < 3; i++) this.addBlock();
  }

  get head(): FakeBlock {
    return this.blocks.at(-1)!;
  }

  /** A new block with these transfers, and the broadcast transactions waiting. */
  addBlock(transfers: TronTransferSpec[] = []): { number: number; txIDs: string[] } {
    const number = this.blocks.length === 0 ? FIRST_BLOCK : this.head.number + 1;
    const timestamp = GENESIS_MS + (number - FIRST_BLOCK) * BLOCK_MS;
    const made = transfers.map((t) => this.transaction(t.asset, t.from ?? randomTronAddress(), t.to, t.units, timestamp - 1_000));
    const txs = [...this.pool, ...made];
    this.pool = [];
    for (const tx of txs) if (this.failing.has(tx.txID)) tx.failed = true;
    const parent = this.blocks.at(-1)?.id ?? '00'.repeat(32);
    this.blocks.push({ number, parent, timestamp, txs, id: this.blockId(number, parent, txs) });
    return { number, txIDs: made.map((t) => t.txID) };
  }

  advance(blocks: number): void {
    for (let i = 0; i < blocks; i++) this.addBlock();
  }

  /** A reorg: the block holding `txID` and every later one are replaced, the same without it. */
  drop(txID: string): void {
    const at = this.blocks.findIndex((b) => b.txs.some((t) => t.txID === txID));
    if (at < 0) throw new Error(`fake tron: no transaction ${txID}`);
    this.reorgs++;
    for (let i = at; i < this.blocks.length; i++) {
      const b = this.blocks[i]!;
      b.txs = b.txs.filter((t) => t.txID !== txID);
      b.parent = i === 0 ? b.parent : this.blocks[i - 1]!.id;
      b.id = this.blockId(b.number, b.parent, b.txs);
      delete b.json;
    }
  }

  /** The transaction fails on chain (out of energy) when mined, or now if it is. */
  fail(txID: string): void {
    this.failing.add(txID);
    for (const b of this.blocks) {
      for (const t of b.txs) if (t.txID === txID) (t.failed = true), delete b.json;
    }
  }

  /** Confirmed balances (every block counts as solidified here). */
  balance(address: string, asset: TronTransferAsset): bigint {
    let total = 0n;
    for (const t of this.blocks.flatMap((b) => b.txs)) {
      if (t.failed || t.asset !== asset) continue;
      if (t.to === address) total += t.units;
      if (t.owner === address) total -= t.units;
    }
    return total;
  }

  private blockId(number: number, parent: string, txs: FakeTx[]): string {
    const hash = bytesToHex(sha256(new TextEncoder().encode(`${parent}:${number}:${this.reorgs}:${txs.map((t) => t.txID).join(',')}`)));
    return number.toString(16).padStart(16, '0') + hash.slice(16);
  }

  private transaction(asset: TronTransferAsset, owner: string, to: string, units: bigint, timestamp: number, recipientInRaw = to): FakeTx {
    const head = this.blocks.at(-1);
    const refBlock = head ? hexToBytes(head.id) : new Uint8Array(32);
    const expiration = (head?.timestamp ?? GENESIS_MS) + EXPIRATION_MS;
    // Each built transaction unique (as a node's clock makes them).
    timestamp += this.builds++;
    const rawHex = encodeTronRaw({
      refBlockBytes: refBlock.subarray(6, 8),
      refBlockHash: refBlock.subarray(8, 16),
      expiration,
      timestamp,
      contract:
        asset === 'trx'
          ? { kind: 'transfer', owner, to: recipientInRaw, amount: units }
          : { kind: 'trigger', owner, contract: FAKE_USDT_CONTRACT, data: transferData(recipientInRaw, units), feeLimit: 100_000_000n },
    });
    return {
      txID: bytesToHex(sha256(hexToBytes(rawHex))),
      asset,
      owner,
      to,
      units,
      rawHex,
      refBlockBytes: bytesToHex(refBlock.subarray(6, 8)),
      refBlockHash: bytesToHex(refBlock.subarray(8, 16)),
      expiration,
      timestamp,
      failed: false,
    };
  }

  /**
   * The next `times` answers of `path` (for block `num`, if given) are `answer`: `[]` or `{}` of a backend that has
   * not caught up, or java-tron's HTTP-200 error object (`error`).
   */
  answerNext(path: string, answer: '[]' | '{}' | 'error' | 'partial' | { fixture: string }, options: { num?: number; times?: number } = {}): void {
    // java-tron's catch-all error answer (documentation-en docs/api/http, "Other exceptions"; test/fixtures/chains/README.md).
    const text = answer === 'error' ? JSON.stringify(fixture('tron/error')) : typeof answer === 'object' ? JSON.stringify(fixture(answer.fixture)) : answer;
    this.overrides.push({ path, ...(options.num !== undefined ? { num: options.num } : {}), answer: text, times: options.times ?? 1 });
  }

  /** Answers set with answerNext not given yet. */
  get overridesLeft(): number {
    return this.overrides.reduce((n, o) => n + o.times, 0);
  }

  // --- the API ---

  handle(path: string, body: any): string {
    const override = this.overrides.find((o) => o.times > 0 && o.path === path && (o.num === undefined || o.num === body.num));
    if (override) {
      override.times--;
      // The results of all but the block's last transaction: a backend that has not processed all of it.
      if (override.answer === 'partial') return JSON.stringify((JSON.parse(this.blockJson(this.byNumber(body.num)!).infos) as unknown[]).slice(0, -1));
      return override.answer;
    }
    switch (path) {
      case '/wallet/getnowblock':
        return this.blockJson(this.head).block;
      case '/wallet/getblockbynum': {
        this.blockReads.push(body.num);
        const b = this.byNumber(body.num);
        return b ? this.blockJson(b).block : '{}';
      }
      case '/wallet/gettransactioninfobyblocknum': {
        const b = this.byNumber(body.num);
        return b ? this.blockJson(b).infos : '[]';
      }
      case '/wallet/gettransactioninfobyid': {
        const b = this.blocks.find((x) => x.txs.some((t) => t.txID === body.value));
        return JSON.stringify(b ? this.info(b, b.txs.find((t) => t.txID === body.value)!) : {});
      }
      case '/wallet/getcontract':
        return JSON.stringify(body.value === FAKE_USDT_CONTRACT ? fixture('tron/getcontract') : {});
      case '/wallet/createtransaction':
        return JSON.stringify(this.buildAnswer(this.build('trx', body.owner_address, body.to_address, BigInt(body.amount))));
      case '/wallet/triggersmartcontract': {
        if (body.contract_address !== FAKE_USDT_CONTRACT || body.function_selector !== 'transfer(address,uint256)') {
          return JSON.stringify({ result: { code: 'CONTRACT_VALIDATE_ERROR', message: this.text(body, 'Smart contract is not exist.') } });
        }
        const to = addressOfAccountBytes(body.parameter.slice(0, 64));
        const tx = this.build('usdt', body.owner_address, to, BigInt(`0x${body.parameter.slice(64)}`));
        return JSON.stringify({ ...fixture('tron/triggersmartcontract'), transaction: this.buildAnswer(tx) });
      }
      case '/wallet/broadcasttransaction':
        return JSON.stringify(this.broadcast(body));
      case '/walletsolidity/getaccount': {
        const balance = this.balance(body.address, 'trx');
        return JSON.stringify(balance === 0n ? {} : { ...fixture('tron/getaccount'), address: body.address, balance: Number(balance) });
      }
      case '/walletsolidity/triggerconstantcontract': {
        const owner = addressOfAccountBytes(body.parameter);
        const units = this.balance(owner, 'usdt');
        return JSON.stringify({ ...fixture('tron/triggerconstantcontract'), constant_result: [units.toString(16).padStart(64, '0')] });
      }
      default:
        throw new NotFound(path);
    }
  }

  private byNumber(n: unknown): FakeBlock | undefined {
    return typeof n === 'number' ? this.blocks[n - FIRST_BLOCK] : undefined;
  }

  private build(asset: TronTransferAsset, owner: string, to: string, units: bigint): FakeTx {
    const tx = this.transaction(asset, owner, to, units, this.head.timestamp + 1, this.tamperBuilds ? randomTronAddress() : to);
    this.built.set(tx.txID, tx);
    return tx;
  }

  private buildAnswer(tx: FakeTx) {
    const template = fixture(tx.asset === 'trx' ? 'tron/createtransaction' : 'tron/triggersmartcontract');
    const answer = tx.asset === 'trx' ? template : template.transaction;
    answer.txID = tx.txID;
    answer.raw_data_hex = tx.rawHex;
    Object.assign(answer.raw_data, { expiration: tx.expiration, timestamp: tx.timestamp });
    Object.assign(answer.raw_data, { ref_block_bytes: tx.refBlockBytes, ref_block_hash: tx.refBlockHash });
    const value = answer.raw_data.contract[0].parameter.value;
    const to = this.tamperJson ? randomTronAddress() : tx.to;
    if (tx.asset === 'trx') Object.assign(value, { owner_address: tx.owner, to_address: to, amount: Number(tx.units) });
    else Object.assign(value, { owner_address: tx.owner, contract_address: FAKE_USDT_CONTRACT, data: transferData(to, tx.units) });
    return answer;
  }

  /** A message as java-tron writes it: text with visible=true, hex of the text otherwise. */
  private text(body: { visible?: boolean }, message: string): string {
    return body.visible === true ? message : hexText(message);
  }

  /**
   * As java-tron does: raw_data_hex and txID are not read; raw_data is serialised again, and the signature must hold
   * for those bytes and recover to the owner.
   */
  private broadcast(tx: { raw_data?: any; signature?: string[]; visible?: boolean }) {
    if (!tx.raw_data || !Array.isArray(tx.raw_data.contract)) return JSON.parse(JSON.stringify(fixture('tron/error')));
    let raw: Uint8Array;
    try {
      raw = hexToBytes(rawOfJson(tx.raw_data));
    } catch {
      return JSON.parse(JSON.stringify(fixture('tron/error')));
    }
    const txID = bytesToHex(sha256(raw));
    const refuse = (code: string, message: string) => ({ result: false, code, txid: txID, message: this.text(tx, message) });
    const built = this.built.get(txID);
    const signature = hexToBytes(tx.signature?.[0] ?? '');
    if (signature.length !== 65) return refuse('SIGERROR', 'Validate signature error: miss sig or contract');
    const v = signature[64]!;
    let signer: string;
    try {
      const key = secp256k1.Signature.fromBytes(signature.subarray(0, 64), 'compact')
        .addRecoveryBit(v >= 27 ? v - 27 : v)
        .recoverPublicKey(raw.length ? sha256(raw) : raw)
        .toBytes(false);
      signer = base58check.encode(Uint8Array.of(0x41, ...keccak_256(key.subarray(1)).subarray(12)));
    } catch {
      return refuse('SIGERROR', 'validateSignature error');
    }
    const owner = tx.raw_data.contract[0]?.parameter?.value?.owner_address;
    if (signer !== owner) return refuse('SIGERROR', `Validate signature error: ${signer} is signed by ${owner}`);
    // A transaction this node did not build is one it cannot follow here.
    if (!built) return refuse('OTHER_ERROR', 'unknown transaction');
    if (this.head.timestamp > built.expiration) return refuse('TRANSACTION_EXPIRATION_ERROR', 'Transaction expired');
    if (this.pool.includes(built) || this.blocks.some((b) => b.txs.includes(built))) return refuse('DUP_TRANSACTION_ERROR', 'Dup transaction.');
    this.pool.push(built);
    this.broadcasts.push({ txID: built.txID, signer, to: built.to, units: built.units, asset: built.asset });
    return { ...fixture('tron/broadcasttransaction-ok'), txid: built.txID };
  }

  private blockJson(b: FakeBlock): { block: string; infos: string } {
    if (b.json) return b.json;
    const block = fixture('tron/getblockbynum');
    const [trxTemplate, usdtTemplate] = block.transactions;
    Object.assign(block.block_header.raw_data, { number: b.number, parentHash: b.parent, timestamp: b.timestamp });
    block.blockID = b.id;
    block.transactions = b.txs.map((t) => {
      const tx = structuredClone(t.asset === 'trx' ? trxTemplate : usdtTemplate);
      tx.txID = t.txID;
      tx.raw_data_hex = t.rawHex;
      tx.ret = [{ contractRet: t.failed ? 'OUT_OF_ENERGY' : 'SUCCESS' }];
      Object.assign(tx.raw_data, { expiration: t.expiration, timestamp: t.timestamp });
      const value = tx.raw_data.contract[0].parameter.value;
      if (t.asset === 'trx') Object.assign(value, { owner_address: t.owner, to_address: t.to, amount: Number(t.units) });
      else Object.assign(value, { owner_address: t.owner, data: transferData(t.to, t.units) });
      return tx;
    });
    if (block.transactions.length === 0) delete block.transactions;
    b.json = { block: JSON.stringify(block), infos: JSON.stringify(b.txs.map((t) => this.info(b, t))) };
    return b.json;
  }

  private info(b: FakeBlock, t: FakeTx) {
    const [trxInfo, usdtInfo] = fixture<any[]>('tron/gettransactioninfobyblocknum');
    const info = t.failed ? fixture('tron/gettransactioninfobyid-failed') : t.asset === 'trx' ? trxInfo : usdtInfo;
    Object.assign(info, { id: t.txID, blockNumber: b.number, blockTimeStamp: b.timestamp });
    if (t.asset === 'usdt' && !t.failed) {
      info.fee = Number(TRANSFER_FEE_SUN);
      info.log[0].topics = [TRANSFER_TOPIC, word(t.owner), word(t.to)];
      info.log[0].data = t.units.toString(16).padStart(64, '0');
    }
    return info;
  }
}

export class NotFound extends Error {}

const word = (address: string) => bytesToHex(accountBytes(address)).padStart(64, '0');
const transferData = (to: string, units: bigint) => `a9059cbb${word(to)}${units.toString(16).padStart(64, '0')}`;

// --- protobuf, written here independently of the adapter's reader ---

/** What java-tron serialises of a JSON raw_data (visible=true) of the two contracts the fake builds, hex. */
function rawOfJson(raw: any): string {
  const contract = raw.contract[0];
  if (raw.contract.length !== 1 || !contract) throw new Error('one contract');
  const value = contract.parameter.value;
  return encodeTronRaw({
    refBlockBytes: hexToBytes(raw.ref_block_bytes),
    refBlockHash: hexToBytes(raw.ref_block_hash),
    expiration: raw.expiration,
    timestamp: raw.timestamp,
    contract:
      contract.type === 'TransferContract'
        ? { kind: 'transfer', owner: value.owner_address, to: value.to_address, amount: BigInt(value.amount) }
        : { kind: 'trigger', owner: value.owner_address, contract: value.contract_address, data: value.data, ...(raw.fee_limit !== undefined ? { feeLimit: BigInt(raw.fee_limit) } : {}) },
  });
}

function varint(n: bigint): Uint8Array {
  const out: number[] = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) byte |= 0x80;
    out.push(byte);
  } while (n > 0n);
  return Uint8Array.from(out);
}
export interface TronRawSpec {
  refBlockBytes: Uint8Array;
  refBlockHash: Uint8Array;
  expiration: number;
  timestamp: number;
  contract: { kind: 'transfer'; owner: string; to: string; amount: bigint } | { kind: 'trigger'; owner: string; contract: string; data: string; feeLimit?: bigint };
}

/** Transaction.raw as java-tron serialises it (fields 1, 4, 8, 11, 14, 18), hex. */
export function encodeTronRaw(spec: TronRawSpec): string {
  const c = spec.contract;
  const account = (address: string) => Uint8Array.of(0x41, ...accountBytes(address));
  const contract =
    c.kind === 'transfer'
      ? contractOf(1, 'type.googleapis.com/protocol.TransferContract', [bytesField(1, account(c.owner)), bytesField(2, account(c.to)), varintField(3, c.amount)])
      : contractOf(31, 'type.googleapis.com/protocol.TriggerSmartContract', [bytesField(1, account(c.owner)), bytesField(2, account(c.contract)), bytesField(4, hexToBytes(c.data))]);
  return bytesToHex(
    concat(
      bytesField(1, spec.refBlockBytes),
      bytesField(4, spec.refBlockHash),
      varintField(8, BigInt(spec.expiration)),
      bytesField(11, contract),
      varintField(14, BigInt(spec.timestamp)),
      ...(c.kind === 'trigger' && c.feeLimit !== undefined ? [varintField(18, c.feeLimit)] : []),
    ),
  );
}

const varintField = (field: number, value: bigint) => concat(varint(BigInt(field << 3)), varint(value));
const bytesField = (field: number, value: Uint8Array) => concat(varint(BigInt((field << 3) | 2)), varint(BigInt(value.length)), value);
const contractOf = (type: number, typeUrl: string, fields: Uint8Array[]) =>
  concat(varintField(1, BigInt(type)), bytesField(2, concat(bytesField(1, new TextEncoder().encode(typeUrl)), bytesField(2, concat(...fields)))));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
