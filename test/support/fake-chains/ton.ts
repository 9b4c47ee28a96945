// A fake toncenter (HTTP API v2) for one wallet: its transactions newest first, paged by (lt, hash) starting AT the
// transaction named, as toncenter does; incoming transfers with a text comment, without one, or our own outgoing
// (external) messages. Addresses are written the way toncenter writes them: the wallet as non-bounceable (UQ...),
// whatever form the configuration uses, so the adapter must compare accounts, not strings.
import { createHash, randomBytes } from 'node:crypto';
import { fixture } from './fixtures.ts';
import { NotFound } from './tron.ts';

export interface TonTransferSpec {
  /** In TON. */
  amount: string;
  /** The text comment; null: a body that is no text comment. */
  comment: string | null;
  from?: string;
  /** Sent bounceable (to an EQ... address): a wallet that is not active sends it back in the same transaction. */
  bounceable?: boolean;
}

interface FakeTonTx {
  lt: bigint;
  hash: string;
  utime: number;
  source: string;
  nanotons: bigint;
  comment: string | null;
  /** What went back to the sender in the same transaction (a bounce), nanotons; 0n for none. */
  bounced: bigint;
  /** Its JSON as served, built once. */
  text?: string;
}

/** A friendly address (bounceable or not) of a basechain account: tag, workchain, hash, CRC16-XMODEM. */
export function tonFriendly(hash: Uint8Array, bounceable: boolean): string {
  const body = Uint8Array.of(bounceable ? 0x11 : 0x51, 0x00, ...hash);
  let crc = 0;
  for (const byte of body) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return Buffer.from([...body, crc >> 8, crc & 0xff]).toString('base64url');
}

export const randomTonAddress = () => tonFriendly(randomBytes(32), true);
/** What a bounce costs its sender (forwarding fees), in nanotons. */
const BOUNCE_FEE = 2_666_690n;

export class FakeTon {
  private readonly account = createHash('sha256').update('payrail fake ton wallet').digest();
  /** The wallet as CHAINS_FILE names it (bounceable). */
  readonly wallet = tonFriendly(this.account, true);
  private readonly walletAsApiWritesIt = tonFriendly(this.account, false);
  private readonly txs: FakeTonTx[] = [];
  private lt = 46_543_000_001n;
  /** Largest page the API serves. */
  readonly maxLimit = 100;
  /** Every call answers toncenter's error object (HTTP 200, ok: false) while true. */
  erroring = false;
  /** The wallet's account state (v2 AccountStateEnum): a wallet not deployed yet is `uninitialized`. */
  state: 'active' | 'uninitialized' | 'frozen' = 'active';
  /** The wallet as toncenter writes it when it is not deployed or not: its non-bounceable form. */
  readonly nonBounceableWallet = tonFriendly(this.account, false);

  constructor() {
    this.add({ amount: '1', comment: 'before the watcher started' });
  }

  /** An incoming transfer to the wallet; answers its transaction hash. */
  add(spec: TonTransferSpec): string {
    const lt = (this.lt += 1_000n);
    const hash = createHash('sha256').update(`ton:${lt}`).digest('base64');
    const [whole, fraction = ''] = spec.amount.split('.');
    const nanotons = BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9) || '0');
    // The bounce carries the value back less the fees of its own forwarding.
    const bounced = spec.bounceable && this.state !== 'active' ? nanotons - BOUNCE_FEE : 0n;
    this.txs.push({ lt, hash, utime: 1_714_060_800 + this.txs.length, source: spec.from ?? randomTonAddress(), nanotons, comment: spec.comment, bounced });
    return hash;
  }

  /** Our own wallet sending (an external message: no source, no value in). */
  addOutgoing(): string {
    const lt = (this.lt += 1_000n);
    const hash = createHash('sha256').update(`ton:${lt}`).digest('base64');
    this.txs.push({ lt, hash, utime: 1_714_060_800 + this.txs.length, source: '', nanotons: 0n, comment: null, bounced: 0n });
    return hash;
  }

  get balance(): bigint {
    return this.txs.reduce((sum, t) => sum + (t.bounced ? 0n : t.nanotons), 0n);
  }

  handle(path: string, query: URLSearchParams): string {
    if (this.erroring) return JSON.stringify(fixture('ton/error'));
    switch (path) {
      case '/getTransactions': {
        const texts = this.page(query).map((t) => (t.text ??= JSON.stringify(this.transaction(t))));
        return JSON.stringify({ ...fixture('ton/getTransactions'), result: '__RESULT__' }).replace('"__RESULT__"', `[${texts.join(',')}]`);
      }
      case '/getAddressInformation': {
        const answer = fixture('ton/getAddressInformation');
        answer.result.balance = this.balance.toString();
        answer.result.state = this.state;
        // An account not deployed has neither code nor data.
        if (this.state !== 'active') Object.assign(answer.result, { code: '', data: '' });
        return JSON.stringify(answer);
      }
      case '/getAddressBalance':
        return JSON.stringify({ ...fixture('ton/getAddressBalance'), result: this.balance.toString() });
      default:
        throw new NotFound(path);
    }
  }

  private page(query: URLSearchParams): FakeTonTx[] {
    const limit = Math.min(Number(query.get('limit') ?? 10), this.maxLimit);
    const newestFirst = [...this.txs].reverse();
    const lt = query.get('lt');
    const start = lt ? newestFirst.findIndex((t) => t.lt === BigInt(lt) && t.hash === query.get('hash')) : 0;
    if (start < 0) throw new Error(`fake ton: no transaction ${lt}`);
    return newestFirst.slice(start, start + limit);
  }

  private transaction(t: FakeTonTx) {
    const tx = fixture('ton/getTransactions').result[0];
    tx.address.account_address = this.walletAsApiWritesIt;
    tx.utime = t.utime;
    tx.transaction_id = { ...tx.transaction_id, lt: t.lt.toString(), hash: t.hash };
    Object.assign(tx.in_msg, {
      source: t.source,
      destination: this.walletAsApiWritesIt,
      value: t.nanotons.toString(),
      created_lt: (t.lt - 1n).toString(),
      msg_data:
        t.comment === null
          ? { '@type': 'msg.dataRaw', body: 'te6cckEBAQEAAgAAAEysuc0=', init_state: '' }
          : { '@type': 'msg.dataText', text: Buffer.from(t.comment, 'utf8').toString('base64') },
      message: t.comment ?? '',
    });
    tx.out_msgs = t.bounced
      ? [
          {
            ...structuredClone(tx.in_msg),
            source: this.walletAsApiWritesIt,
            destination: t.source,
            value: t.bounced.toString(),
            created_lt: (t.lt + 1n).toString(),
            msg_data: { '@type': 'msg.dataRaw', body: 'te6cckEBAQEAAgAAAEysuc0=', init_state: '' },
            message: '',
          },
        ]
      : [];
    return tx;
  }
}
