// What real chain adapters keep in the database: derived address indexes (each handed out once), the watchers'
// cursors with their lease (one process scans a network at a time), and the transactions the service sends
// (stored signed before the broadcast, so a repeated send broadcasts the same transaction).
import { randomUUID } from 'node:crypto';
import { Prisma, type ChainSend } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import type { Network } from '../domain/assets.ts';
import type { OutgoingPurpose } from './adapter.ts';

/** The database, or an interactive transaction on it (a send stored under a lock its caller holds). */
type DbOrTx = Db | Prisma.TransactionClient;

/**
 * The next index of `network` for `ownerId`, with its address (`derive`). Indexes are never handed out twice: two
 * allocations racing for one index meet on its primary key, and the loser takes the next. Networks that receive on
 * one wallet hand out their payment tags (TON) and reference keys (Solana) here too: `derive` makes a random one,
 * and the (network, address) key makes it unique (a collision is retried with a new one).
 */
export async function allocateIndex(db: Db, network: Network, ownerId: string, derive: (index: number) => string): Promise<{ index: number; address: string }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [{ next }] = (await db.$queryRaw<{ next: number }[]>`
      SELECT (COALESCE(MAX("index"), -1) + 1)::int AS "next" FROM "DerivedAddress" WHERE "network" = ${network}`) as [{ next: number }];
    const address = derive(next);
    const inserted = await db.$executeRaw`
      INSERT INTO "DerivedAddress" ("network", "index", "address", "ownerId") VALUES (${network}, ${next}, ${address}, ${ownerId})
      ON CONFLICT DO NOTHING`;
    if (inserted === 1) return { index: next, address };
  }
  throw new Error(`could not allocate an address index on ${network}: too much contention`);
}

/** The derived addresses of `network` after `afterIndex` (a watcher's growing set), in index order. */
export async function derivedSince(db: Db, network: Network, afterIndex: number): Promise<{ index: number; address: string }[]> {
  return db.$queryRaw<{ index: number; address: string }[]>`
    SELECT "index", "address" FROM "DerivedAddress" WHERE "network" = ${network} AND "index" > ${afterIndex} ORDER BY "index"`;
}

/** Which of `addresses` are derived addresses of `network`, with their index (a watcher telling ours apart). */
export async function derivedAmong(db: DbOrTx, network: Network, addresses: string[]): Promise<Map<string, number>> {
  if (addresses.length === 0) return new Map();
  const rows = await db.$queryRaw<{ index: number; address: string }[]>`
    SELECT "index", "address" FROM "DerivedAddress" WHERE "network" = ${network} AND "address" = ANY(${[...new Set(addresses)]}::text[])`;
  return new Map(rows.map((r) => [r.address, r.index]));
}

/**
 * What a watcher watches on `network`, in memory: the derived addresses (on TON and Solana, the tags and reference
 * keys handed out with the one wallet). Read incrementally: allocateIndex makes index n visible only after n - 1, so
 * after the first read only rows beyond the highest index seen are new. Refresh AFTER reading what the chain holds
 * (a page, a block) and before matching it: anything paid there was handed out before, so is then known.
 */
export class WatchedSet {
  /** Normalised form -> the form handed out. */
  private readonly known = new Map<string, string>();
  private highest = -1;
  constructor(
    private readonly db: Db,
    readonly network: Network,
    /** How chain data writes an address that may differ from ours in form only (EVM: any case). */
    private readonly normalize: (value: string) => string = (value) => value,
  ) {}

  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  /**
   * Loads what was handed out since the last load. Everything written before the call is known once it resolves:
   * concurrent callers (blocks read in parallel) share one load started after all of them called, never one that
   * was already under way (it may have missed what they must see).
   */
  refresh(): Promise<void> {
    if (!this.running) {
      this.running = this.load().finally(() => (this.running = null));
      return this.running;
    }
    this.queued ??= this.running.then(
      () => this.next(),
      () => this.next(),
    );
    return this.queued;
  }

  private next(): Promise<void> {
    this.queued = null;
    return this.refresh();
  }

  private async load(): Promise<void> {
    const rows = await derivedSince(this.db, this.network, this.highest);
    for (const row of rows) this.known.set(this.normalize(row.address), row.address);
    if (rows.length) this.highest = Math.max(this.highest, rows.at(-1)!.index);
  }

  has(value: string): boolean {
    return this.known.has(this.normalize(value));
  }

  /** The address as handed out (and reported), if `value` is one of ours. */
  lookup(value: string): string | undefined {
    return this.known.get(this.normalize(value));
  }

  get size(): number {
    return this.known.size;
  }
}

/** The highest index handed out on `network`, or -1. */
export async function highestIndex(db: Db, network: Network): Promise<number> {
  const [row] = await db.$queryRaw<{ max: number | null }[]>`SELECT MAX("index") AS "max" FROM "DerivedAddress" WHERE "network" = ${network}`;
  return row?.max ?? -1;
}

/**
 * A watcher's cursor and lease on one network. `hold()` takes or renews the lease (database time: processes need
 * no shared clock) and answers the stored state, or null when another process holds it; `save()` writes the state
 * only while the lease is ours.
 */
export class CursorLease {
  readonly owner = randomUUID();
  constructor(
    private readonly db: Db,
    readonly network: Network,
    readonly leaseMs: number,
  ) {}

  async hold<S>(initial: () => Promise<S>): Promise<S | null> {
    const fresh = JSON.stringify(await initialIfMissing(this.db, this.network, initial));
    const rows = await this.db.$queryRaw<{ state: S }[]>`
      INSERT INTO "ChainCursor" ("network", "state", "owner", "leaseUntil", "updatedAt")
      VALUES (${this.network}, ${fresh}::jsonb, ${this.owner}, now() + ${this.leaseMs} * interval '1 millisecond', now())
      ON CONFLICT ("network") DO UPDATE SET "owner" = EXCLUDED."owner", "leaseUntil" = EXCLUDED."leaseUntil"
      WHERE "ChainCursor"."owner" IS NULL OR "ChainCursor"."owner" = EXCLUDED."owner" OR "ChainCursor"."leaseUntil" < now()
      RETURNING "state"`;
    return rows[0]?.state ?? null;
  }

  /** Extends a lease still ours (during a long scan); false when another process took it over. */
  async renew(): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE "ChainCursor" SET "leaseUntil" = now() + ${this.leaseMs} * interval '1 millisecond'
      WHERE "network" = ${this.network} AND "owner" = ${this.owner}`;
    return n === 1;
  }

  /** Writes the state; false when the lease is no longer ours (another process took over: stop scanning). */
  async save(state: unknown): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE "ChainCursor" SET "state" = ${JSON.stringify(state)}::jsonb, "updatedAt" = now()
      WHERE "network" = ${this.network} AND "owner" = ${this.owner}`;
    return n === 1;
  }

  async release(): Promise<void> {
    await this.db.$executeRaw`UPDATE "ChainCursor" SET "owner" = NULL, "leaseUntil" = NULL WHERE "network" = ${this.network} AND "owner" = ${this.owner}`;
  }
}

/** The first state of a network never scanned; nothing when a row exists (its state wins). */
async function initialIfMissing<S>(db: Db, network: Network, initial: () => Promise<S>): Promise<S | null> {
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS "n" FROM "ChainCursor" WHERE "network" = ${network}`;
  return row!.n > 0 ? null : initial();
}

// --- outgoing transactions ---

/** autoswap: a swap (or its token approval) through a DEX router from the hot wallet; its venue follows it itself. */
export type SendPurpose = OutgoingPurpose | 'sweep' | 'topup' | 'autoswap';

/** Sends whose outcome a feature waits for (withdrawals, refunds); consolidation is the adapter's own business. */
export const isReported = (purpose: string): purpose is OutgoingPurpose => purpose === 'withdrawal' || purpose === 'refund';

/** One input of a multi-input send: what it took from which of our addresses (the custody check reads these). */
export interface SendInput {
  address: string;
  /** In units of the asset, as a decimal string. */
  amount: string;
  /** The output spent (UTXO chains): lets a later send leave it alone while this one is open. */
  txid?: string;
  vout?: number;
}

export interface NewSend {
  id: string;
  network: Network;
  purpose: SendPurpose;
  asset: string;
  fromAddress: string;
  toAddress: string;
  tag: string | null;
  amount: string;
  rawTx: string;
  txHash: string;
  nonce: bigint | null;
  /** The outputs it spends (UTXO chains), when they are ours to account for. */
  inputs?: SendInput[];
  /** What it pays the chain, in the native asset, when known at signing (UTXO chains). */
  fee?: string;
}

/** The inputs a stored send recorded (none for single-address sends). */
export const sendInputs = (inputs: unknown): SendInput[] => (Array.isArray(inputs) ? (inputs as SendInput[]) : []);

export const findSend = (db: DbOrTx, id: string): Promise<ChainSend | null> => db.chainSend.findUnique({ where: { id } });

/**
 * Stores a signed transaction before its broadcast. Answers the stored row: this one, or the one a concurrent send of
 * the same id stored first (then that transaction is the one to broadcast).
 */
export async function storeSend(db: DbOrTx, send: NewSend): Promise<ChainSend> {
  const inputs = send.inputs ? JSON.stringify(send.inputs) : null;
  await db.$executeRaw`
    INSERT INTO "ChainSend" ("id", "network", "purpose", "asset", "fromAddress", "toAddress", "tag", "amount", "rawTx", "txHash", "nonce", "status", "inputs", "fee")
    VALUES (${send.id}, ${send.network}, ${send.purpose}, ${send.asset}, ${send.fromAddress}, ${send.toAddress}, ${send.tag},
      ${send.amount}::numeric, ${send.rawTx}, ${send.txHash}, ${send.nonce}, 'signed', ${inputs}::jsonb, ${send.fee ?? null}::numeric)
    ON CONFLICT ("id") DO NOTHING`;
  return (await findSend(db, send.id))!;
}

/**
 * Runs `choose` under the network's spend lock (a transaction-scoped advisory lock, so across processes): what one
 * send picks to spend (coins, a nonce) and stores is visible to the next before it chooses. `choose` talks to the
 * node inside the transaction, hence the long timeout.
 */
export function withSpendLock<T>(db: Db, network: Network, choose: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return db.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT 1 AS "locked" FROM (SELECT pg_advisory_xact_lock(hashtext(${`payrail:spend:${network}`}))) l`;
      return choose(tx);
    },
    { maxWait: 15_000, timeout: 60_000 },
  );
}

/**
 * Puts a newly signed transaction in place of one that can never be mined (it expired before reaching the chain),
 * unless a concurrent send replaced it first: answers whether this one is now the stored one. Conditional on the old
 * hash, so two sends of one id never both broadcast a replacement.
 */
export async function replaceSend(db: Db, id: string, previousTxHash: string, next: { rawTx: string; txHash: string }): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE "ChainSend" SET "rawTx" = ${next.rawTx}, "txHash" = ${next.txHash}, "status" = 'signed',
      "previousTxHashes" = array_append("previousTxHashes", ${previousTxHash}), "updatedAt" = now()
    WHERE "id" = ${id} AND "txHash" = ${previousTxHash} AND "status" IN ('signed', 'sent')`;
  return n === 1;
}

/** The sends of `network` not final yet (a watcher follows them to confirmed or failed). */
export const openSends = (db: DbOrTx, network: Network): Promise<ChainSend[]> =>
  db.chainSend.findMany({ where: { network, status: { in: ['signed', 'sent'] } }, orderBy: { createdAt: 'asc' } });

export async function updateSend(
  db: Db,
  id: string,
  change: Partial<Pick<ChainSend, 'status' | 'rawTx' | 'txHash' | 'blockNumber'>> & { fee?: string; replacing?: string },
): Promise<void> {
  await db.chainSend.update({
    where: { id },
    data: {
      ...(change.status ? { status: change.status } : {}),
      ...(change.rawTx ? { rawTx: change.rawTx } : {}),
      ...(change.txHash ? { txHash: change.txHash } : {}),
      ...(change.blockNumber !== undefined ? { blockNumber: change.blockNumber } : {}),
      ...(change.fee !== undefined ? { fee: new Prisma.Decimal(change.fee) } : {}),
      ...(change.replacing ? { previousTxHashes: { push: change.replacing } } : {}),
      updatedAt: new Date(),
    },
  });
}
