import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { Prisma } from '../../generated/prisma/client.ts';
import { v7 as uuidv7 } from 'uuid';
import { MAX_BALANCE, Money } from '../domain/money.ts';
import { ConflictError, LimitExceededError } from '../errors/app-error.ts';

type Tx = Prisma.TransactionClient;

/**
 * The ledger's own accounts, per company and asset. The merchant's money is `merchant_available`; the rest are
 * counter-accounts. Features add theirs (Feature.declares.ledgerAccounts, and the LedgerAccounts registry below).
 */
export const ACCOUNTS = {
  /** Money on chain outside our addresses: debited when a payment arrives, credited when we send. */
  chainExternal: 'chain_external',
  merchantAvailable: 'merchant_available',
  /** Accepted withdrawals not yet done or rejected (amount plus fee each). */
  merchantHeld: 'merchant_held',
  /** Arrived at an invoice address in an asset or network the invoice does not expect; held apart. */
  merchantSuspense: 'merchant_suspense',
  platformFees: 'platform_fees',
  networkFees: 'network_fees',
} as const;

/**
 * The accounts features add, a registry they fill by declaration merging (each lists them in
 * Feature.declares.ledgerAccounts too), e.g.
 *   declare module '../ledger/ledger.ts' { interface LedgerAccounts extends Record<(typeof X_ACCOUNTS)[keyof typeof X_ACCOUNTS], true> {} }
 */
export interface LedgerAccounts {}

export type Account = (typeof ACCOUNTS)[keyof typeof ACCOUNTS] | (keyof LedgerAccounts & string);

/** Which part of the merchant's balances an account counts in (ledger/balances.ts); such an account never goes negative (ledger:verify). */
export type BalanceBucket = 'available' | 'held' | 'suspense';

/** A feature's account: what it holds and, when it is the merchant's money, the balance it counts in. */
export interface LedgerAccountDeclaration {
  description: string;
  /** None: a counter-account (what venues, fees or the chain got), not the merchant's money. */
  balance?: BalanceBucket;
}

declare module '../core/feature.ts' {
  interface Declarations {
    /** Its ledger accounts, each with what it holds and the merchant balance it counts in, if any. */
    ledgerAccounts?: Readonly<Record<string, LedgerAccountDeclaration>>;
  }
}

/** The ledger's own accounts that are the merchant's money, by balance. */
const OWN_BUCKETS: Readonly<Record<string, BalanceBucket>> = {
  [ACCOUNTS.merchantAvailable]: 'available',
  [ACCOUNTS.merchantHeld]: 'held',
  [ACCOUNTS.merchantSuspense]: 'suspense',
};

/** Every account that is the merchant's money, the ledger's own and the features' (Declared.ledgerAccounts), with its balance. */
export function balanceBuckets(declared: Readonly<Record<string, LedgerAccountDeclaration>>): ReadonlyMap<string, BalanceBucket> {
  const buckets = new Map(Object.entries(OWN_BUCKETS));
  for (const [account, { balance }] of Object.entries(declared)) if (balance) buckets.set(account, balance);
  return buckets;
}

/**
 * Rows per running balance at most (the "Balance" table's CHECK says the same). Concurrent postings to one
 * account take different shards, so it should exceed the transactions that post at once (DB pool 10 by default).
 */
export const BALANCE_SHARDS = 16;

/** Accounts that may never go below zero: a posting that would take one negative is refused. */
const GUARDED: ReadonlySet<string> = new Set<string>([ACCOUNTS.merchantAvailable]);

export interface Posting {
  account: Account;
  amount: Decimal;
  /** The withdrawal this posting is for, when one journal holds several (a bulk withdrawal's hold). */
  withdrawalId?: string;
}

/**
 * The journal kinds, a registry the features fill by declaration merging (each lists its kinds in
 * Feature.declares.journalKinds too), e.g.
 *   declare module '../ledger/ledger.ts' { interface JournalKinds extends Record<(typeof DEPOSIT_JOURNAL_KINDS)[number], true> {} }
 */
export interface JournalKinds {}

export type JournalKind = keyof JournalKinds & string;

export interface Journal {
  companyId: string;
  asset: string;
  kind: JournalKind;
  postings: Posting[];
  invoiceId?: string | null;
  transferId?: string | null;
  refundId?: string | null;
  withdrawalId?: string | null;
  /** The object of the posting feature this journal moves money for, when the columns above do not name it (its ledger check reads it). */
  subjectId?: string | null;
}

/** A guarded account lacks the money a debit needs (checked under its debit lock, see exactSum). */
export class InsufficientFundsError extends ConflictError {
  constructor(
    readonly account: string,
    readonly available: Decimal,
    readonly needed: Decimal,
  ) {
    super('CONFLICT', `Insufficient funds: ${needed.toFixed()} needed, ${available.toFixed()} available`);
    this.name = 'InsufficientFundsError';
  }
}

/** What this transaction holds of one running balance. */
interface Held {
  /** The shard it posted to (its advisory lock and row lock held until commit); later postings reuse it. */
  shard: number;
  /** Sum of its postings so far: a debit within this is covered by the transaction's own credits. */
  net: Decimal;
}

// Per interactive transaction (Prisma passes the same client object to every call inside one).
const heldByTx = new WeakMap<object, Map<string, Held>>();
const balanceKey = (companyId: string, asset: string, account: string) => `${companyId}/${asset}/${account}`;

/** The postings of a journal checked to balance, netted per account in a fixed order (the lock order). */
function prepare(journal: Journal): { postings: Posting[]; moves: [string, Decimal][] } {
  const postings = journal.postings.filter((p) => !p.amount.isZero());
  const sum = postings.reduce((s, p) => s.plus(p.amount), new Money(0));
  if (!sum.isZero()) throw new Error(`unbalanced journal ${journal.kind}: sums to ${sum.toFixed()}`);
  // Accounts in a fixed order, so transactions that fall back to waiting take them in the same order.
  return { postings, moves: netMoves(postings) };
}

/** Postings summed per account, in the fixed account order. */
function netMoves(postings: Posting[]): [string, Decimal][] {
  const byAccount = new Map<string, Decimal>();
  for (const p of postings) byAccount.set(p.account, (byAccount.get(p.account) ?? new Money(0)).plus(p.amount));
  return [...byAccount.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The journals' entries and balance moves (netted per account: one row move each, as a statement may change a row
 * once) as common table expressions (`journal_*`), posted only where `when` holds and every move stays within the
 * balance limit (`journal_fits`, see limitCheck). The last one, `journal_moved`, returns the account and shard each
 * move went to. All journals are of one company and asset.
 */
function journalCtes(journals: Journal[], postings: Posting[][], moves: [string, Decimal][], held: Map<string, Held> | null, when: Prisma.Sql): Prisma.Sql {
  const { companyId, asset } = journals[0]!;
  // Entry ids in the order the entries are written (uuidv7, monotonic in this process, which writes every entry of
  // a transaction): exports and checks read (createdAt, id), and every entry of one transaction has the same
  // createdAt, so this order is the order the balances really moved in (a credit before its fee; docs/exports.md).
  const entries = journals.flatMap((journal, j) => {
    const journalId = randomUUID();
    return postings[j]!.map((p) => ({
      id: uuidv7(), journalId, account: p.account, amount: p.amount.toFixed(), kind: journal.kind, invoiceId: journal.invoiceId ?? null,
      transferId: journal.transferId ?? null, refundId: journal.refundId ?? null, withdrawalId: p.withdrawalId ?? journal.withdrawalId ?? null,
      subjectId: journal.subjectId ?? null,
    }));
  });
  // One array per column: the same statement text for any number of entries (a named statement's one shape).
  const column = <K extends keyof (typeof entries)[number]>(k: K) => entries.map((e) => e[k]);
  const values = moves.map(
    ([account, amount]) => Prisma.sql`(${account}::text, ${amount.toFixed()}::numeric, ${held?.get(balanceKey(companyId, asset, account))?.shard ?? null}::int)`,
  );
  const posted = Prisma.sql`${when} AND (SELECT "fits" FROM journal_fits)`;
  // Per account: the shard this transaction already holds, else the first shard no other transaction is posting
  // to (a transaction-scoped advisory lock per shard, tried without waiting; it also covers shards that do not
  // exist yet, so two first credits never pick the same new row), else any shard (then it may wait).
  return Prisma.sql`journal_v ("account", "amount", "held") AS (
      VALUES ${Prisma.join(values)}
    ), journal_picked AS (
      SELECT v."account", v."amount", COALESCE(
        v."held",
        (SELECT s FROM generate_series(0, ${Prisma.raw(String(BALANCE_SHARDS - 1))}) s
         WHERE pg_try_advisory_xact_lock(hashtext(${`${companyId}/${asset}/`} || v."account"), s) LIMIT 1),
        floor(random() * ${Prisma.raw(String(BALANCE_SHARDS))})::int
      ) AS "shard"
      FROM journal_v v
    ), journal_fits AS (
      ${limitCheck(companyId, asset)}
    ), journal_entries AS (
      INSERT INTO "LedgerEntry" ("id", "journalId", "companyId", "asset", "account", "amount", "kind", "invoiceId", "transferId", "refundId", "withdrawalId", "subjectId")
      SELECT e."id", e."journalId", ${companyId}::uuid, ${asset}::text, e."account", e."amount", e."kind", e."invoiceId", e."transferId", e."refundId", e."withdrawalId", e."subjectId"
      FROM unnest(${column('id')}::uuid[], ${column('journalId')}::uuid[], ${column('account')}::text[], ${column('amount')}::numeric[], ${column('kind')}::text[],
        ${column('invoiceId')}::text[], ${column('transferId')}::uuid[], ${column('refundId')}::uuid[], ${column('withdrawalId')}::uuid[], ${column('subjectId')}::uuid[])
        AS e("id", "journalId", "account", "amount", "kind", "invoiceId", "transferId", "refundId", "withdrawalId", "subjectId")
      WHERE ${posted}
    ), journal_moved AS (
      INSERT INTO "Balance" AS b ("companyId", "asset", "account", "shard", "amount", "updatedAt")
      SELECT ${companyId}::uuid, ${asset}, p."account", p."shard", p."amount", now() FROM journal_picked p WHERE ${posted}
      ON CONFLICT ("companyId", "asset", "account", "shard") DO UPDATE SET "amount" = b."amount" + EXCLUDED."amount", "updatedAt" = now()
      RETURNING b."account", b."shard"
    )`;
}

// Code constants as literals, not parameters: fewer values to send with every posting.
const MAX_BALANCE_SQL = Prisma.raw(`${MAX_BALANCE.toFixed()}::numeric`);

/**
 * Whether every move of `journal_picked` keeps its balance (the sum of its shards) and the shard it goes to within
 * MAX_BALANCE, or at least no further from zero than they are: one row, `fits`. Read under the statement's snapshot,
 * so credits committing meanwhile are not seen; each is at most MAX_AMOUNT, so what they can add beyond the limit is
 * bounded by the transactions in flight, far inside the column (docs/money.md, "Limits").
 */
function limitCheck(companyId: string, asset: string): Prisma.Sql {
  const within = (before: Prisma.Sql) =>
    Prisma.sql`(abs(${before} + p."amount") <= ${MAX_BALANCE_SQL} OR abs(${before} + p."amount") <= abs(${before}))`;
  return Prisma.sql`SELECT COALESCE(bool_and(${within(Prisma.sql`t."total"`)} AND ${within(Prisma.sql`t."shard"`)}), TRUE) AS "fits"
      FROM journal_picked p CROSS JOIN LATERAL (
        SELECT COALESCE(SUM(b."amount"), 0) AS "total", COALESCE(SUM(b."amount") FILTER (WHERE b."shard" = p."shard"), 0) AS "shard"
        FROM "Balance" b WHERE b."companyId" = ${companyId}::uuid AND b."asset" = ${asset} AND b."account" = p."account"
      ) t`;
}

/** The refusal of a journal that would take a balance past MAX_BALANCE. */
const limitExceeded = (journal: Journal) =>
  new LimitExceededError(
    `This ${journal.kind.replaceAll('_', ' ')} of ${journal.asset} would take a balance past the limit of ${MAX_BALANCE.toFixed()} ${journal.asset} (docs/money.md, "Limits")`,
  );

/** Records, for the rest of the transaction, the shard each account posted to and what it netted. */
function remember(held: Map<string, Held>, journal: Journal, moves: [string, Decimal][], rows: { account: string; shard: number }[]): void {
  for (const [account, amount] of moves) {
    const row = rows.find((r) => r.account === account);
    if (!row) throw new Error(`journal ${journal.kind}: no balance row moved for ${account}`);
    const k = balanceKey(journal.companyId, journal.asset, account);
    held.set(k, { shard: Number(row.shard), net: (held.get(k)?.net ?? new Money(0)).plus(amount) });
  }
}

const heldOf = (tx: Tx): Map<string, Held> => {
  let held = heldByTx.get(tx);
  if (!held) heldByTx.set(tx, (held = new Map()));
  return held;
};

/**
 * Writes one balanced journal and moves the running balances, in the caller's transaction, in one statement
 * (the entries and every shard) unless a guarded account needs its exact check first.
 */
export async function postJournal(tx: Tx, journal: Journal): Promise<void> {
  const prepared = prepare(journal);
  if (prepared.postings.length === 0) return;
  const { companyId, asset } = journal;
  const held = heldOf(tx);

  // A debit of a guarded account beyond this transaction's own credits to it: exact check (exactSum). Every
  // such debit (withdrawal, refund, fee on a later accept) takes it, so two never both pass on the same money.
  for (const [account, amount] of prepared.moves) {
    if (!GUARDED.has(account) || !amount.isNegative()) continue;
    const mine = held.get(balanceKey(companyId, asset, account));
    if (mine && !mine.net.plus(amount).isNegative()) continue;
    const total = await exactSum(tx, companyId, asset, account);
    if (total.plus(amount).isNegative()) throw new InsufficientFundsError(account, total, amount.neg());
  }

  const rows = await tx.$queryRaw<{ fits: boolean; account: string | null; shard: number | null }[]>`
    WITH ${journalCtes([journal], [prepared.postings], prepared.moves, held, Prisma.sql`TRUE`)}
    SELECT f."fits", m."account", m."shard" FROM journal_fits f LEFT JOIN journal_moved m ON TRUE`;
  if (!rows[0]!.fits) throw limitExceeded(journal);
  remember(held, journal, prepared.moves, rows as { account: string; shard: number }[]);
}

/**
 * Journals of one company and asset as table expressions (`journal_*`) for a statement that also makes the state
 * change they book, outside an interactive transaction (one statement is atomic): posted where `when` holds and
 * `fits` (an SQL boolean: every balance stays within its limit) is true, which the caller's own changes must require
 * as well. Null when they debit a guarded account beyond their own credits: that needs postJournal's exact check.
 */
export function journalsInStatement(journals: Journal[], when: Prisma.Sql): { ctes: Prisma.Sql; fits: Prisma.Sql } | null {
  const kept = journals.map((journal) => ({ journal, postings: prepare(journal).postings })).filter((k) => k.postings.length > 0);
  if (kept.length === 0) return { ctes: Prisma.empty, fits: Prisma.sql`TRUE` };
  const [{ journal: first }] = kept as [(typeof kept)[number]];
  if (kept.some(({ journal }) => journal.companyId !== first.companyId || journal.asset !== first.asset)) throw new Error('journalsInStatement: journals of one company and asset only');
  const moves = netMoves(kept.flatMap((k) => k.postings));
  if (debitsGuarded(moves)) return null;
  return {
    ctes: Prisma.sql`${journalCtes(kept.map((k) => k.journal), kept.map((k) => k.postings), moves, null, when)},`,
    fits: Prisma.sql`(SELECT "fits" FROM journal_fits)`,
  };
}

const debitsGuarded = (moves: [string, Decimal][]) => moves.some(([account, amount]) => GUARDED.has(account) && amount.isNegative());

/** Whether journalsInStatement takes these journals: they debit no guarded account beyond their own credits to it. */
export const bookableInStatement = (journals: Journal[]): boolean => !debitsGuarded(netMoves(journals.flatMap((j) => prepare(j).postings)));

/**
 * A withdrawal's debit of merchant_available and whatever depends on it, in ONE statement: the exact check of the
 * withdrawable balance (payrail_withdrawable: the balance's debit lock, its sum under a later snapshot, less the
 * fees invoices will still charge), the journal when that covers the debit, and the caller's own table
 * expressions, which must make their changes conditional on `covered` (an SQL boolean). Without a transaction
 * around it the debit lock is held only for this statement, the shortest it can be.
 */
export async function postDebitIfCovered(
  q: Tx,
  journal: Journal,
  dependent: (covered: Prisma.Sql) => Prisma.Sql,
): Promise<{ covered: boolean; available: Decimal }> {
  const prepared = prepare(journal);
  const debit = prepared.moves.find(([account]) => account === ACCOUNTS.merchantAvailable)?.[1];
  if (!debit?.isNegative()) throw new Error(`journal ${journal.kind}: postDebitIfCovered needs a debit of ${ACCOUNTS.merchantAvailable}`);
  const held = heldByTx.get(q) ?? null;
  const covered = Prisma.sql`(SELECT "covered" FROM journal_guard)`;
  const rows = await q.$queryRaw<{ available: string; covered: boolean; fits: boolean; account: string | null; shard: number | null }[]>`
    WITH journal_guard AS (
      SELECT t."available", t."available" >= ${debit.neg().toFixed()}::numeric AS "covered"
      FROM (SELECT payrail_withdrawable(${journal.companyId}::uuid, ${journal.asset}::text) AS "available") t
    ),
    ${journalCtes([journal], [prepared.postings], prepared.moves, held, covered)},
    ${dependent(Prisma.sql`(${covered} AND (SELECT "fits" FROM journal_fits))`)}
    SELECT g."available"::text AS "available", g."covered", f."fits", m."account", m."shard"
    FROM journal_guard g CROSS JOIN journal_fits f LEFT JOIN journal_moved m ON TRUE`;
  const first = rows[0]!;
  if (first.covered && !first.fits) throw limitExceeded(journal);
  if (first.covered && held) remember(held, journal, prepared.moves, rows as { account: string; shard: number }[]);
  return { covered: first.covered, available: new Money(first.available) };
}

/**
 * One balance, exact for debits: first the balance's debit lock (a transaction-scoped advisory lock, waited
 * for), then the sum of its shards under a snapshot taken after it, which therefore includes every debit that
 * held the lock before. Debits that come later wait for this transaction; credits (and a transaction's debits
 * covered by its own credits) only add once committed, so leaving out those in flight can only under-count.
 */
async function exactSum(tx: Tx, companyId: string, asset: string, account: string): Promise<Decimal> {
  // The lock (slot -1, apart from the shard slots of the same key) and the sum under a later snapshot: see the
  // function in the withdrawals migration.
  const [row] = await tx.$queryRaw<{ total: string }[]>`
    SELECT payrail_exact_balance(${companyId}::uuid, ${asset}::text, ${account}::text)::text AS total`;
  return new Money(row!.total);
}

/**
 * The merchant's available money in `asset`, exact for the rest of the caller's transaction: it holds the debit
 * lock until commit, so no other debit can take from it meanwhile (credits may still add to it).
 */
export async function availableBalance(tx: Tx, companyId: string, asset: string): Promise<Decimal> {
  return exactSum(tx, companyId, asset, ACCOUNTS.merchantAvailable);
}

/**
 * What a withdrawal may take from the merchant's money in `asset` (available less the fees invoices will still
 * charge), exact for the rest of the caller's transaction: it holds the debit lock until commit, so no other debit
 * can take from it meanwhile (credits may still add to it).
 */
export async function withdrawableBalance(tx: Tx, companyId: string, asset: string): Promise<Decimal> {
  const [row] = await tx.$queryRaw<{ total: string }[]>`SELECT payrail_withdrawable(${companyId}::uuid, ${asset}::text)::text AS total`;
  return new Money(row!.total);
}

export interface Debit {
  companyId: string;
  asset: string;
  /** Taken from merchant_available: everything the operation costs the merchant (amount plus fees). */
  amount: Decimal;
  kind: Journal['kind'];
  /** Where it goes (chain_external, network_fees, ...): these postings sum to `amount`. */
  to: Posting[];
  invoiceId?: string | null;
  transferId?: string | null;
  refundId?: string | null;
}

/**
 * Debits the merchant's available money when it covers `amount` (for withdrawals): true and the journal is
 * written; false and nothing is written when it does not. Exact under any concurrency (see postJournal).
 */
export async function debitAvailable(tx: Tx, debit: Debit): Promise<boolean> {
  if (!debit.amount.gt(0)) throw new Error(`a debit must be positive, got ${debit.amount.toFixed()}`);
  const { amount, to, ...journal } = debit;
  try {
    await postJournal(tx, { ...journal, postings: [{ account: ACCOUNTS.merchantAvailable, amount: amount.neg() }, ...to] });
    return true;
  } catch (e) {
    if (e instanceof InsufficientFundsError) return false;
    throw e;
  }
}
