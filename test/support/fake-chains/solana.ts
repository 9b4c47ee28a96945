// A fake Solana JSON-RPC node for one receiving wallet: transfers to it with Solana Pay reference keys among the
// accounts, `confirmed` until the test finalizes them, failed ones (err set), and ones that leave the chain (a
// skipped fork: gone from every answer). getSignaturesForAddress pages with before/until, newest first.
import { createHash, randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { fixture } from './fixtures.ts';
import { NotFound } from './tron.ts';

export interface SolanaTransferSpec {
  /** In SOL. */
  amount: string;
  references: string[];
  from?: string;
  /** The transaction failed on chain (it is listed, with err). */
  failed?: boolean;
  /**
   * A v0 transaction whose accounts come partly from an address lookup table: the wallet (writable) and/or the
   * references (read-only) are then in meta.loadedAddresses, not in accountKeys.
   */
  lookup?: { wallet?: boolean; references?: boolean };
}

interface FakeSolanaTx {
  signature: string;
  slot: number;
  /** accountKeys (the static keys), then loaded writable, then loaded read-only: the order of the balances. */
  keys: string[];
  loaded: { writable: string[]; readonly: string[] } | null;
  walletIndex: number;
  pre: bigint;
  post: bigint;
  failed: boolean;
  status: 'confirmed' | 'finalized';
  gone: boolean;
  /** Its getTransaction result as served, built once. */
  text?: string;
}

/** JSON with bigint values written as plain integers (lamports beyond 2^53, as a node writes them). */
export const json = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__bigint__${v}` : v)).replace(/"__bigint__(-?\d+)"/g, '$1');

export const randomSolanaKey = () => base58.encode(randomBytes(32));
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** The lookup table v0 transactions load accounts from. */
const LOOKUP_TABLE = base58.encode(createHash('sha256').update('payrail fake lookup table').digest());

export class FakeSolana {
  readonly wallet = base58.encode(createHash('sha256').update('payrail fake solana wallet').digest());
  slot = 262_145_600;
  private readonly txs: FakeSolanaTx[] = [];
  private readonly bySignature = new Map<string, FakeSolanaTx>();
  /** Every call answers a JSON-RPC error (a node behind) while true. */
  erroring = false;
  private balance = 0n;

  constructor() {
    this.add({ amount: '1', references: [] });
    this.finalize();
  }

  /** A transfer to the wallet in a new slot, `confirmed`; answers its signature. */
  add(spec: SolanaTransferSpec): string {
    const [whole, fraction = ''] = spec.amount.split('.');
    const lamports = BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9) || '0');
    const pre = this.balance;
    const post = spec.failed ? pre : pre + lamports;
    this.balance = post;
    const signature = base58.encode(randomBytes(64));
    const from = spec.from ?? randomSolanaKey();
    const wallet = spec.lookup?.wallet ? [] : [this.wallet];
    const references = spec.lookup?.references ? [] : spec.references;
    const loaded = spec.lookup ? { writable: spec.lookup.wallet ? [this.wallet] : [], readonly: spec.lookup.references ? spec.references : [] } : null;
    const keys = [from, ...wallet, ...references, SYSTEM_PROGRAM, ...(loaded ? [...loaded.writable, ...loaded.readonly] : [])];
    this.bySignature.set(signature, {
      signature,
      slot: ++this.slot,
      keys,
      loaded,
      walletIndex: keys.indexOf(this.wallet),
      pre,
      post,
      failed: spec.failed ?? false,
      status: 'confirmed',
      gone: false,
    });
    this.txs.push(this.bySignature.get(signature)!);
    return signature;
  }

  /** Everything so far becomes `finalized`. */
  finalize(): void {
    for (const t of this.txs) if (!t.gone) t.status = 'finalized';
  }

  advance(slots: number): void {
    this.slot += slots;
  }

  /** The transaction's fork is skipped: it is in no answer any more, and its money never arrived. */
  drop(signature: string): void {
    const tx = this.bySignature.get(signature)!;
    tx.gone = true;
    this.balance -= tx.post - tx.pre;
  }

  /** The result of one call, as JSON text. */
  handle(method: string, params: any[]): string {
    if (method === 'getTransaction') {
      const tx = this.find(params[0]);
      return tx ? (tx.text ??= json(this.transaction(tx))) : 'null';
    }
    return json(this.result(method, params));
  }

  private find(signature: string): FakeSolanaTx | undefined {
    const tx = this.bySignature.get(signature);
    return tx && !tx.gone ? tx : undefined;
  }

  private result(method: string, params: any[]): unknown {
    switch (method) {
      case 'getSlot':
        return this.slot;
      case 'getHealth':
        return 'ok';
      case 'getSignaturesForAddress':
        return this.signatures(params[0], params[1] ?? {});
      case 'getSignatureStatuses': {
        const template = fixture('solana/getSignatureStatuses').result;
        const statusTemplate = template.value[0];
        template.context.slot = this.slot;
        template.value = (params[0] as string[]).map((s) => {
          const tx = this.find(s);
          if (!tx) return null;
          const err = tx.failed ? { InstructionError: [0, { Custom: 1 }] } : null;
          const confirmations = tx.status === 'finalized' ? null : this.slot - tx.slot;
          return { ...statusTemplate, slot: tx.slot, err, status: err ? { Err: err } : { Ok: null }, confirmationStatus: tx.status, confirmations };
        });
        return template;
      }
      case 'getBalance': {
        const answer = fixture('solana/getBalance').result;
        answer.context.slot = this.slot;
        answer.value = params[0] === this.wallet ? Number(this.finalizedBalance()) : 0;
        return answer;
      }
      default:
        throw new NotFound(method);
    }
  }

  private visible(): FakeSolanaTx[] {
    return this.txs.filter((t) => !t.gone);
  }

  private finalizedBalance(): bigint {
    return this.visible()
      .filter((t) => t.status === 'finalized')
      .reduce((sum, t) => sum + t.post - t.pre, 0n);
  }

  private signatures(address: string, options: { limit?: number; before?: string; until?: string }) {
    if (address !== this.wallet) return [];
    let list = this.visible().reverse();
    if (options.before) list = list.slice(list.findIndex((t) => t.signature === options.before) + 1);
    if (options.until) {
      const end = list.findIndex((t) => t.signature === options.until);
      if (end >= 0) list = list.slice(0, end);
    }
    const [template] = fixture<any>('solana/getSignaturesForAddress').result;
    return list.slice(0, Math.min(options.limit ?? 1000, 1000)).map((t) => ({
      ...template,
      signature: t.signature,
      slot: t.slot,
      blockTime: 1_714_060_800 + t.slot - 262_145_600,
      err: t.failed ? { InstructionError: [0, { Custom: 1 }] } : null,
      confirmationStatus: t.status,
    }));
  }

  private transaction(t: FakeSolanaTx) {
    const result = fixture(t.loaded ? 'solana/getTransaction-v0' : 'solana/getTransaction').result;
    const payerBefore = 10_000_000_000n;
    const sent = t.post - t.pre;
    const system = t.keys.indexOf(SYSTEM_PROGRAM);
    const staticKeys = t.loaded ? t.keys.slice(0, system + 1) : t.keys;
    result.slot = t.slot;
    result.meta.err = t.failed ? { InstructionError: [0, { Custom: 1 }] } : null;
    result.meta.status = t.failed ? { Err: result.meta.err } : { Ok: null };
    // Balances as u64 numbers, the way the RPC writes them, over the static keys then the loaded ones.
    result.meta.preBalances = t.keys.map((_, i) => (i === 0 ? payerBefore : i === t.walletIndex ? t.pre : i === system ? 1n : 0n));
    result.meta.postBalances = t.keys.map((_, i) => (i === 0 ? payerBefore - sent - 5_000n : i === t.walletIndex ? t.post : i === system ? 1n : 0n));
    result.transaction.message.accountKeys = staticKeys;
    result.transaction.message.instructions[0].accounts = t.keys.map((_, i) => i).filter((i) => i !== system);
    result.transaction.message.instructions[0].programIdIndex = system;
    result.transaction.message.header.numReadonlyUnsignedAccounts = staticKeys.length - 1 - (staticKeys.includes(this.wallet) ? 1 : 0);
    if (t.loaded) {
      result.meta.loadedAddresses = t.loaded;
      result.transaction.message.addressTableLookups = [
        {
          accountKey: LOOKUP_TABLE,
          writableIndexes: t.loaded.writable.map((_, i) => i),
          readonlyIndexes: t.loaded.readonly.map((_, i) => t.loaded!.writable.length + i),
        },
      ];
    }
    result.transaction.signatures = [t.signature];
    return result;
  }
}
