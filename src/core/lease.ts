// The one claim/lease mechanism (docs/leases.md): a holder has something until a deadline, renews it, hands it back;
// once the deadline passed anyone may take it over, and every take-over bumps a generation that the stale holder's
// writes must match (fencing), so a holder that lost its lease cannot overwrite the new holder's work.
//
// Two shapes over the same rules, on any table whose columns are named in a spec (identifiers are constants of the
// code, never input):
// - Leases: one row per named thing (a lane, a network's cursor, the event relay), taken with INSERT … ON CONFLICT.
// - RowClaims: a batch of work rows taken with FOR UPDATE SKIP LOCKED (two claimers never wait for or get the same row).
// Pure SQL through Prisma raw queries: the same statements run on PostgreSQL and on the embedded PGlite.
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';

/** The database or a transaction on it. */
export type LeaseDb = Db | Prisma.TransactionClient;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function ident(name: string): Prisma.Sql {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  return Prisma.raw(`"${name}"`);
}

/** The casts of a key column's values, one and an array of them. */
function keyCasts(keyType: 'text' | 'uuid'): { keyCast: Prisma.Sql; keysCast: Prisma.Sql } {
  return { keyCast: Prisma.raw(keyType === 'uuid' ? '::uuid' : '::text'), keysCast: Prisma.raw(keyType === 'uuid' ? '::uuid[]' : '::text[]') };
}

/** Where deadlines are read: the database's clock (default; processes need no shared clock) or the caller's. */
export type LeaseClock = 'database' | (() => Date);

function nowSql(clock: LeaseClock): Prisma.Sql {
  return clock === 'database' ? Prisma.sql`now()` : Prisma.sql`${clock()}::timestamptz`;
}

const plus = (now: Prisma.Sql, ms: number) => Prisma.sql`(${now} + ${ms} * interval '1 millisecond')`;

/** A table of named leases: one row per leased thing; a free row has no owner and no deadline. */
export interface LeaseTable {
  table: string;
  /** The primary key: what is leased. */
  key: string;
  keyType: 'text' | 'uuid';
  /** Nullable: the holder's name. */
  owner: string;
  ownerType: 'text' | 'uuid';
  /** Nullable timestamptz: the deadline. */
  until: string;
  /** Integer, bumped by every change of holder: the fencing token. */
  generation: string;
  /**
   * Whether taking a lease creates its row (a table of leases only) or takes rows that exist (a table holding more,
   * e.g. a cursor's state, whose row its owner writes first).
   */
  rows: 'created' | 'existing';
}

/** A lease held: valid for writes while the row still carries this owner and generation. */
export interface Lease {
  key: string;
  owner: string;
  generation: number;
  until: Date;
}

/** Named leases of one table for one holder (a process, a worker instance). */
export class Leases {
  private readonly t: {
    table: Prisma.Sql;
    key: Prisma.Sql;
    owner: Prisma.Sql;
    until: Prisma.Sql;
    generation: Prisma.Sql;
    keyCast: Prisma.Sql;
    keysCast: Prisma.Sql;
    ownerCast: Prisma.Sql;
  };

  constructor(
    readonly spec: LeaseTable,
    readonly leaseMs: number,
    readonly owner: string = randomUUID(),
    private readonly clock: LeaseClock = 'database',
  ) {
    this.t = {
      table: ident(spec.table),
      key: ident(spec.key),
      owner: ident(spec.owner),
      until: ident(spec.until),
      generation: ident(spec.generation),
      ...keyCasts(spec.keyType),
      ownerCast: Prisma.raw(spec.ownerType === 'uuid' ? '::uuid' : '::text'),
    };
  }

  /**
   * A statement (usable as a CTE) taking the lease on every key `keys` selects (a query with one column "key"):
   * those free, expired or already ours; ours are renewed and keep their generation, the others get a new one.
   * Returns "key" (text) and "generation" of each key taken. Rows are taken in key order, so two such statements
   * cannot deadlock; two racing for one key meet on its row and the loser takes nothing of it.
   */
  acquireSql(keys: Prisma.Sql, at: { now: Prisma.Sql; until: Prisma.Sql } = this.deadlines()): Prisma.Sql {
    const { table, key, owner, until, generation } = this.t;
    const me = Prisma.sql`${this.owner}${this.t.ownerCast}`;
    if (this.spec.rows === 'existing') {
      return Prisma.sql`
        UPDATE ${table} l SET ${owner} = ${me}, ${until} = ${at.until}::timestamptz,
          ${generation} = CASE WHEN l.${owner} = ${me} THEN l.${generation} ELSE l.${generation} + 1 END
        FROM (${keys}) k
        WHERE l.${key} = k."key" AND (l.${owner} IS NULL OR l.${owner} = ${me} OR l.${until} < ${at.now})
        RETURNING l.${key}::text AS "key", l.${generation}::int AS "generation", l.${until} AS "until"`;
    }
    return Prisma.sql`
      INSERT INTO ${table} AS l (${key}, ${owner}, ${until}, ${generation})
      SELECT DISTINCT k."key", ${this.owner}${this.t.ownerCast}, ${at.until}::timestamptz, 1 FROM (${keys}) k ORDER BY k."key"
      ON CONFLICT (${key}) DO UPDATE SET ${owner} = EXCLUDED.${owner}, ${until} = EXCLUDED.${until},
        ${generation} = CASE WHEN l.${owner} = EXCLUDED.${owner} THEN l.${generation} ELSE l.${generation} + 1 END
      WHERE l.${owner} IS NULL OR l.${owner} = EXCLUDED.${owner} OR l.${until} < ${at.now}
      RETURNING l.${key}::text AS "key", l.${generation}::int AS "generation", l.${until} AS "until"`;
  }

  /** The current time and this holder's new deadline, as SQL, on the spec's clock. */
  deadlines(): { now: Prisma.Sql; until: Prisma.Sql } {
    const now = nowSql(this.clock);
    return { now, until: plus(now, this.leaseMs) };
  }

  /** Takes (or renews) the lease on `key`; null while another holder's lease runs. */
  async acquire(db: LeaseDb, key: string): Promise<Lease | null> {
    const rows = await db.$queryRaw<{ key: string; generation: number; until: Date }[]>(
      this.acquireSql(Prisma.sql`SELECT ${key}${this.t.keyCast} AS "key"`),
    );
    return rows[0] ? { ...rows[0], owner: this.owner } : null;
  }

  /** Extends a lease still held (same generation); null when it was taken over (the holder must stop). */
  async renew(db: LeaseDb, lease: Lease): Promise<Lease | null> {
    const { table, until } = this.t;
    const { until: next } = this.deadlines();
    const rows = await db.$queryRaw<{ until: Date }[]>`
      UPDATE ${table} l SET ${until} = ${next} WHERE ${this.fence(lease)} RETURNING l.${until} AS "until"`;
    return rows[0] ? { ...lease, until: rows[0].until } : null;
  }

  /** Hands the lease back at once (the row stays, free: its generation keeps counting). False if it was not ours any more. */
  async release(db: LeaseDb, lease: Lease): Promise<boolean> {
    return (await db.$executeRaw(this.releaseSql(lease))) === 1;
  }

  /**
   * The statement handing back this holder's leases on `keys` (whatever their generation), where `and` (on alias
   * `l`) holds too.
   */
  releaseKeysSql(keys: string[], and: Prisma.Sql = Prisma.sql`TRUE`): Prisma.Sql {
    const { key, owner } = this.t;
    return this.freeSql(Prisma.sql`l.${key} = ANY(${keys}${this.t.keysCast}) AND l.${owner} = ${this.owner}${this.t.ownerCast} AND (${and})`);
  }

  private releaseSql(lease: Lease): Prisma.Sql {
    return this.freeSql(this.fence(lease));
  }

  /**
   * No owner, and the deadline moved to the hand-back (not cleared): a row free by either rule, so holders whose
   * only rule is "the deadline passed" (a previous release during a rolling deploy) take it too.
   */
  private freeSql(where: Prisma.Sql): Prisma.Sql {
    const { table, owner, until } = this.t;
    return Prisma.sql`UPDATE ${table} l SET ${owner} = NULL, ${until} = LEAST(l.${until}, ${nowSql(this.clock)}) WHERE ${where}`;
  }

  /**
   * A condition on the lease row (aliased `alias`) true only while `lease` is current: a write guarded by it does
   * nothing once another holder took over, even if the stale holder still believes its deadline has not passed.
   */
  fence(lease: Lease, alias = 'l'): Prisma.Sql {
    return this.fenceOn(Prisma.sql`${lease.key}${this.t.keyCast}`, Prisma.sql`${lease.generation}`, alias, lease.owner);
  }

  /**
   * The same with the key and generation as SQL expressions (writes of many leases in one statement, e.g. rows
   * joined to their lane's row): true only where this holder still holds `key` at `generation`.
   */
  fenceOn(key: Prisma.Sql, generation: Prisma.Sql, alias = 'l', holder = this.owner): Prisma.Sql {
    const a = ident(alias);
    const { key: k, owner, generation: g } = this.t;
    return Prisma.sql`(${a}.${k} = ${key} AND ${a}.${owner} = ${holder}${this.t.ownerCast} AND ${a}.${g} = ${generation})`;
  }

  /**
   * A condition true while another holder's lease on `key` (an SQL expression) runs: work of theirs to leave alone
   * (e.g. when choosing what to claim). `now` on this holder's clock unless given.
   */
  heldByOther(key: Prisma.Sql, now: Prisma.Sql = nowSql(this.clock)): Prisma.Sql {
    const { table, key: k, owner, until } = this.t;
    return Prisma.sql`EXISTS (SELECT 1 FROM ${table} o WHERE o.${k} = ${key} AND o.${owner} <> ${this.owner}${this.t.ownerCast} AND o.${until} >= ${now})`;
  }

  /** Whose lease runs on `key` now, if anyone's (diagnostics, tests). */
  async holder(db: LeaseDb, key: string): Promise<{ owner: string; generation: number } | null> {
    const { table, key: k, owner, until, generation, keyCast } = this.t;
    const { now } = this.deadlines();
    const rows = await db.$queryRaw<{ owner: string; generation: number }[]>`
      SELECT l.${owner}::text AS "owner", l.${generation}::int AS "generation" FROM ${table} l
      WHERE l.${k} = ${key}${keyCast} AND l.${owner} IS NOT NULL AND l.${until} >= ${now}`;
    return rows[0] ?? null;
  }
}

/** A table of work rows claimed in batches: a claim sets a deadline and bumps the row's attempt number. */
export interface ClaimTable {
  table: string;
  key: string;
  keyType: 'text' | 'uuid';
  /** Nullable timestamptz: the claim's deadline; null or past means claimable. */
  until: string;
  /** Integer, bumped by every claim: the fencing token (e.g. the send attempt). */
  generation: string;
}

/** One row claimed: valid for writes while the row still carries this generation. */
export interface Claim<R> {
  key: string;
  generation: number;
  until: Date;
  row: R;
}

export interface ClaimQuery {
  /** Which rows are work (aliased `t`), besides being unclaimed or expired. */
  where: Prisma.Sql;
  /** Their order (aliased `t`): claims take the first ones not locked by another claimer. */
  orderBy: Prisma.Sql;
  limit: number;
  /** More to set on the claimed rows (aliased `t`), e.g. a stage. */
  set?: Prisma.Sql;
  /** What to answer of each claimed row (aliased `t`); default every column. */
  returning?: Prisma.Sql;
}

/** Batch claims on one table. */
export class RowClaims {
  private readonly t: { table: Prisma.Sql; key: Prisma.Sql; until: Prisma.Sql; generation: Prisma.Sql; keysCast: Prisma.Sql; keyCast: Prisma.Sql };

  constructor(
    readonly spec: ClaimTable,
    readonly leaseMs: number,
    private readonly clock: LeaseClock = 'database',
  ) {
    this.t = {
      table: ident(spec.table),
      key: ident(spec.key),
      until: ident(spec.until),
      generation: ident(spec.generation),
      ...keyCasts(spec.keyType),
    };
  }

  /** The condition (on alias `t`) of a row nobody holds: never claimed, handed back, or its claim expired. */
  claimable(now: Prisma.Sql = nowSql(this.clock)): Prisma.Sql {
    const { until } = this.t;
    return Prisma.sql`(t.${until} IS NULL OR t.${until} < ${now})`;
  }

  /**
   * Claims up to `limit` rows of work in `orderBy` order, skipping rows another claimer has locked (FOR UPDATE SKIP
   * LOCKED): two claimers never take one row. A row whose claim expired is taken over with a new generation.
   */
  async claim<R>(db: LeaseDb, q: ClaimQuery): Promise<Claim<R>[]> {
    const { table, key, until, generation } = this.t;
    const now = nowSql(this.clock);
    const rows = await db.$queryRaw<(R & { __key: string; __generation: number; __until: Date })[]>`
      WITH picked AS (
        SELECT t.${key} AS "key" FROM ${table} t
        WHERE (${q.where}) AND ${this.claimable(now)}
        ORDER BY ${q.orderBy} LIMIT ${q.limit} FOR UPDATE SKIP LOCKED
      )
      , claimed AS (
        UPDATE ${table} t SET ${until} = ${plus(now, this.leaseMs)}, ${generation} = t.${generation} + 1 ${q.set ? Prisma.sql`, ${q.set}` : Prisma.empty}
        FROM picked WHERE t.${key} = picked."key"
        RETURNING t.${key}::text AS "__key", t.${generation}::int AS "__generation", t.${until} AS "__until", ${q.returning ?? Prisma.sql`t.*`}
      )
      -- In claim order (t: the rows as they were before the claim).
      SELECT claimed.* FROM claimed JOIN ${table} t ON t.${key}::text = claimed."__key" ORDER BY ${q.orderBy}`;
    return rows.map(({ __key, __generation, __until, ...row }) => ({ key: __key, generation: __generation, until: __until, row: row as unknown as R }));
  }

  /** Extends claims still current; answers the keys extended (the others were taken over). */
  async renew(db: LeaseDb, claims: Claim<unknown>[]): Promise<string[]> {
    if (claims.length === 0) return [];
    const { table, until } = this.t;
    const rows = await db.$queryRaw<{ key: string }[]>`
      UPDATE ${table} t SET ${until} = ${plus(nowSql(this.clock), this.leaseMs)} WHERE ${this.fenceAll(claims)}
      RETURNING t.${this.t.key}::text AS "key"`;
    return rows.map((r) => r.key);
  }

  /**
   * Hands claims back at once (setting `set` too, e.g. the stage they wait in, where `and` on alias `t` holds too);
   * answers the keys handed back.
   */
  async release(db: LeaseDb, claims: Claim<unknown>[], set?: Prisma.Sql, and: Prisma.Sql = Prisma.sql`TRUE`): Promise<string[]> {
    if (claims.length === 0) return [];
    const { table, until } = this.t;
    const rows = await db.$queryRaw<{ key: string }[]>`
      UPDATE ${table} t SET ${until} = NULL ${set ? Prisma.sql`, ${set}` : Prisma.empty} WHERE ${this.fenceAll(claims)} AND (${and})
      RETURNING t.${this.t.key}::text AS "key"`;
    return rows.map((r) => r.key);
  }

  /** A condition on the row (aliased `alias`) true only while `claim` is current (fencing a stale holder's write). */
  fence(claim: Claim<unknown>, alias = 't'): Prisma.Sql {
    const a = ident(alias);
    return Prisma.sql`(${a}.${this.t.key} = ${claim.key}${this.t.keyCast} AND ${a}.${this.t.generation} = ${claim.generation})`;
  }

  /** The same for many claims at once. */
  fenceAll(claims: Claim<unknown>[], alias = 't'): Prisma.Sql {
    const a = ident(alias);
    return Prisma.sql`(${a}.${this.t.key}, ${a}.${this.t.generation}) IN (
      SELECT * FROM unnest(${claims.map((c) => c.key)}${this.t.keysCast}, ${claims.map((c) => c.generation)}::int[]))`;
  }
}
