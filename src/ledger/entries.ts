// A company's ledger entries as an export or a check reads them: in (createdAt, id) order, a page at a time, each with
// its source object (invoice, chain transfer, refund, withdrawal) and the chain transaction behind it.
import type { Decimal } from 'decimal.js';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import type { ExportRange } from '../domain/exports.ts';
import { formatPlain, Money } from '../domain/money.ts';

/** A position in (createdAt, id) order: a total order (ids are unique), the order balances after are summed in. */
export interface EntryKey {
  createdAt: Date;
  id: string;
}

export const SOURCE_TYPES = ['refund', 'withdrawal', 'withdrawal_batch', 'chain_transfer', 'invoice'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export interface LedgerEntryRecord extends EntryKey {
  journalId: string;
  kind: string;
  account: string;
  asset: string;
  amount: Decimal;
  sourceType: SourceType | null;
  sourceId: string | null;
  invoiceId: string | null;
  /** The chain transaction of the source (a transfer's, a sent refund's or withdrawal's); null when there is none (yet). */
  txHash: string | null;
}

/** -1, 0 or 1 as `a` comes before, at or after `b`; ids compare as PostgreSQL compares uuids (lower-case hex). */
export function compareKeys(a: EntryKey, b: EntryKey): number {
  const t = a.createdAt.getTime() - b.createdAt.getTime();
  if (t !== 0) return Math.sign(t);
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

interface Row {
  id: string;
  createdAt: Date;
  journalId: string;
  kind: string;
  account: string;
  asset: string;
  amount: string;
  invoiceId: string | null;
  transferId: string | null;
  refundId: string | null;
  withdrawalId: string | null;
  batchWithdrawals: number;
  transferTxHash: string | null;
  refundTxHash: string | null;
  withdrawalTxHash: string | null;
}

/**
 * The entries of a company in `range` after `after` (exclusive; null: from the start of the range), at most `limit`,
 * in (createdAt, id) order: one keyset page, read through the (companyId, createdAt, id) index.
 *
 * The source of an entry is the most specific object it names: its refund, else its withdrawal, else its chain
 * transfer, else its invoice. The one entry that names none, a withdraw call's debit of the available balance (its
 * journal holds the call's withdrawals of one asset), takes the journal's withdrawal when there is one, else it is a
 * `withdrawal_batch` named by the journal id.
 */
export async function readEntryPage(db: Db, companyId: string, range: ExportRange, after: EntryKey | null, limit: number): Promise<LedgerEntryRecord[]> {
  const position = after
    ? Prisma.sql`AND (e."createdAt", e."id") > (${after.createdAt}::timestamptz, ${after.id}::uuid)`
    : Prisma.empty;
  const rows = await db.$queryRaw<Row[]>`
    SELECT e."id"::text AS "id", e."createdAt", e."journalId"::text AS "journalId", e."kind", e."account", e."asset",
      e."amount"::text AS "amount", e."invoiceId", e."transferId"::text AS "transferId", e."refundId"::text AS "refundId",
      COALESCE(e."withdrawalId"::text, j."withdrawalId") AS "withdrawalId", COALESCE(j."withdrawals", 0)::int AS "batchWithdrawals",
      t."txHash" AS "transferTxHash", r."txHash" AS "refundTxHash", w."txHash" AS "withdrawalTxHash"
    FROM "LedgerEntry" e
    LEFT JOIN LATERAL (
      SELECT CASE WHEN COUNT(DISTINCT x."withdrawalId") = 1 THEN MIN(x."withdrawalId"::text) END AS "withdrawalId",
        COUNT(DISTINCT x."withdrawalId") AS "withdrawals"
      FROM "LedgerEntry" x
      -- Only for an entry that names no source (the outer conditions make the rest a one-time filter, no scan).
      WHERE e."withdrawalId" IS NULL AND e."transferId" IS NULL AND e."refundId" IS NULL AND e."invoiceId" IS NULL
        AND x."journalId" = e."journalId" AND x."withdrawalId" IS NOT NULL
    ) j ON TRUE
    LEFT JOIN "ChainTransfer" t ON t."id" = e."transferId"
    LEFT JOIN "Refund" r ON r."id" = e."refundId"
    LEFT JOIN "Withdrawal" w ON w."uid" = COALESCE(e."withdrawalId"::text, j."withdrawalId")::uuid
    WHERE e."companyId" = ${companyId}::uuid AND e."createdAt" >= ${range.from}::timestamptz AND e."createdAt" < ${range.to}::timestamptz
      ${position}
    ORDER BY e."createdAt", e."id"
    LIMIT ${limit}::int`;
  return rows.map(record);
}

function record(r: Row): LedgerEntryRecord {
  const base = { id: r.id, createdAt: r.createdAt, journalId: r.journalId, kind: r.kind, account: r.account, asset: r.asset, amount: new Money(r.amount), invoiceId: r.invoiceId };
  if (r.refundId) return { ...base, sourceType: 'refund', sourceId: r.refundId, txHash: r.refundTxHash };
  if (r.withdrawalId) return { ...base, sourceType: 'withdrawal', sourceId: r.withdrawalId, txHash: r.withdrawalTxHash };
  if (r.batchWithdrawals > 1) return { ...base, sourceType: 'withdrawal_batch', sourceId: r.journalId, txHash: null };
  if (r.transferId) return { ...base, sourceType: 'chain_transfer', sourceId: r.transferId, txHash: r.transferTxHash };
  if (r.invoiceId) return { ...base, sourceType: 'invoice', sourceId: r.invoiceId, txHash: null };
  return { ...base, sourceType: null, sourceId: null, txHash: null };
}

const balanceKey = (asset: string, account: string) => `${asset}/${account}`;

/** Every balance of a company (per asset and account) just before `at`: the sum of its entries created earlier. */
export async function balancesBefore(db: Db, companyId: string, at: Date): Promise<Map<string, Decimal>> {
  const rows = await db.$queryRaw<{ asset: string; account: string; total: string }[]>`
    SELECT "asset", "account", SUM("amount")::text AS "total" FROM "LedgerEntry"
    WHERE "companyId" = ${companyId}::uuid AND "createdAt" < ${at}::timestamptz
    GROUP BY "asset", "account"`;
  return new Map(rows.map((r) => [balanceKey(r.asset, r.account), new Money(r.total)]));
}

/**
 * Balances after each entry, per asset and account: the opening balances plus a running sum in (createdAt, id)
 * order. Whatever the pages, an entry's balance after is the sum of every entry of its account up to it.
 */
export class RunningBalances {
  constructor(private readonly balances: Map<string, Decimal>) {}

  /** Adds an entry; answers its account's balance after it. */
  add(entry: Pick<LedgerEntryRecord, 'asset' | 'account' | 'amount'>): Decimal {
    const k = balanceKey(entry.asset, entry.account);
    const after = (this.balances.get(k) ?? new Money(0)).plus(entry.amount);
    this.balances.set(k, after);
    return after;
  }
}

/** The company an entry belongs to; null when there is no such entry. */
export async function companyOfEntry(db: Db, entryId: string): Promise<string | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(entryId)) return null;
  const [row] = await db.$queryRaw<{ companyId: string }[]>`SELECT "companyId"::text AS "companyId" FROM "LedgerEntry" WHERE "id" = ${entryId}::uuid`;
  return row?.companyId ?? null;
}

/** The columns of a ledger export, in file order (docs/exports.md). */
export const LEDGER_COLUMNS = [
  'entry_id',
  'created_at',
  'journal_id',
  'journal_kind',
  'account',
  'asset',
  'amount',
  'balance_after',
  'source_type',
  'source_id',
  'invoice_id',
  'tx_hash',
] as const;

/**
 * One entry as the cells of its export row. Every text here is ours (ids, names of kinds and accounts) or a chain's
 * transaction hash in its own alphabet, so none is a client's formula: all are written as they are (a TON hash in
 * base64 may start with `+` and must stay the hash).
 */
export const ledgerCells = (e: LedgerEntryRecord, balanceAfter: Decimal): string[] => [
  e.id,
  e.createdAt.toISOString(),
  e.journalId,
  e.kind,
  e.account,
  e.asset,
  formatPlain(e.amount),
  formatPlain(balanceAfter),
  e.sourceType ?? '',
  e.sourceId ?? '',
  e.invoiceId ?? '',
  e.txHash ?? '',
];
