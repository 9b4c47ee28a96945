// The ledger's invariants, checked from scratch: every journal balances, every running balance (the sum of its
// shards) equals the sum of its entries and is not negative where it may not be, what the ledger says moved on
// chain equals the chain records (transfers in, refunds out), and every invoice's status agrees with its money
// (a done invoice has its confirmed credit and its fee, etc.).
import { custodyProblems, type CustodySource } from '../chains/custody.ts';
import type { Db } from '../db/client.ts';
import { Money, toMoney } from '../domain/money.ts';
import { ACCOUNTS } from './ledger.ts';
import { MAX_UNDERPAYMENT_PERCENT } from '../domain/settlement.ts';
import { MODES, type Mode } from '../domain/modes.ts';

export interface LedgerProblem {
  check: 'journal-balance' | 'running-balance' | 'negative-balance' | 'chain-records' | 'invoice-status' | 'withdrawal-status' | 'deposit-status' | 'chain-custody' | 'autoswap-status';
  /** Whose money it is about: test or live mode (docs/modes.md). The custody check is about real chains: live. */
  mode: Mode;
  key: string;
  expected: string;
  actual: string;
}

export interface ModeSummary {
  ok: boolean;
  journals: number;
  problems: number;
}

export interface LedgerReport {
  ok: boolean;
  /** The mode checked, or null for both. */
  mode: Mode | null;
  journals: number;
  entries: number;
  /** Running balances (company, asset, account), however many shards each has. */
  balances: number;
  problems: LedgerProblem[];
  /** Each mode on its own (only the checked one with `mode`). */
  modes: Partial<Record<Mode, ModeSummary>>;
  /** Watched addresses holding more than was credited to them (src/chains/custody.ts): reported, not a failure. */
  custodySurpluses: LedgerProblem[];
}

type Row = Record<string, unknown>;
const key = (...parts: unknown[]) => parts.map(String).join('/');

/**
 * `custody`: the real nodes to ask for the balances of our watched addresses (src/chains/custody.ts); without it the
 * chain is checked only through our own records. `mode`: check one mode's money only (docs/modes.md); both by default.
 */
export async function verifyLedger(db: Db, custody: CustodySource[] = [], options: { mode?: Mode | null } = {}): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];
  // Every company's mode (a tenant's never changes): each problem says whose money it is about.
  const companyModes = new Map((await db.company.findMany({ select: { id: true, mode: true } })).map((c) => [c.id, c.mode]));
  const modeOf = (companyId: unknown): Mode => companyModes.get(String(companyId)) ?? 'test';
  const held = await custodyProblems(db, custody);
  const custodyProblem = (p: (typeof held.problems)[number]): LedgerProblem => ({ check: 'chain-custody', mode: 'live', key: key(p.network, p.address, p.asset), expected: p.expected, actual: p.onChain });
  problems.push(...held.problems.map(custodyProblem));
  const custodySurpluses = held.surpluses.map(custodyProblem);

  const unbalanced = await db.$queryRaw<Row[]>`
    SELECT "journalId", "asset", MIN("companyId"::text) AS "companyId", SUM("amount")::text AS total FROM "LedgerEntry"
    GROUP BY "journalId", "asset" HAVING SUM("amount") <> 0`;
  for (const r of unbalanced) {
    problems.push({ check: 'journal-balance', mode: modeOf(r['companyId']), key: key(r['journalId'], r['asset']), expected: '0', actual: new Money(String(r['total'])).toFixed() });
  }

  const sums = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", "account", SUM("amount")::text AS total
    FROM "LedgerEntry" GROUP BY "companyId", "asset", "account"`;
  const balances = await db.balance.groupBy({ by: ['companyId', 'asset', 'account'], _sum: { amount: true } });
  const fromEntries = new Map(sums.map((r) => [key(r['companyId'], r['asset'], r['account']), new Money(String(r['total']))]));
  const running = new Map(balances.map((b) => [key(b.companyId, b.asset, b.account), toMoney(b._sum.amount ?? 0)]));
  for (const k of new Set([...fromEntries.keys(), ...running.keys()])) {
    const expected = fromEntries.get(k) ?? new Money(0);
    const actual = running.get(k) ?? new Money(0);
    if (!expected.eq(actual)) problems.push({ check: 'running-balance', mode: modeOf(k.split('/')[0]), key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }
  // Single shards may be negative; the merchant's available money (their sum) never is (postJournal's exact check),
  // nor what withdrawals hold.
  for (const [k, amount] of running) {
    if ((k.endsWith(`/${ACCOUNTS.merchantAvailable}`) || k.endsWith(`/${ACCOUNTS.merchantHeld}`) || k.endsWith(`/${ACCOUNTS.swapHold}`)) && amount.isNegative()) {
      problems.push({ check: 'negative-balance', mode: modeOf(k.split('/')[0]), key: k, expected: '>= 0', actual: amount.toFixed() });
    }
  }

  // On-chain view: confirmed transfers we received minus refunds and done withdrawals we sent, per company and asset.
  const received = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", SUM("amount")::text AS total FROM "ChainTransfer"
    WHERE "state" = 'confirmed' GROUP BY "companyId", "asset"`;
  const sent = await db.$queryRaw<Row[]>`
    SELECT "companyId", "asset", SUM("amount")::text AS total FROM (
      SELECT "companyId"::text AS "companyId", "asset", "amount" FROM "Refund"
      UNION ALL SELECT "companyId"::text, "asset", "amount" FROM "Withdrawal" WHERE "status" = 'done'
    ) sent GROUP BY "companyId", "asset"`;
  const chain = new Map<string, Money>();
  for (const r of received) chain.set(key(r['companyId'], r['asset']), new Money(String(r['total'])).neg());
  for (const r of sent) {
    const k = key(r['companyId'], r['asset']);
    chain.set(k, (chain.get(k) ?? new Money(0)).plus(String(r['total'])));
  }
  const ledgerExternal = new Map<string, Money>();
  for (const [k, v] of fromEntries) {
    const [companyId, asset, account] = k.split('/');
    if (account === ACCOUNTS.chainExternal) ledgerExternal.set(key(companyId, asset), v);
  }
  for (const k of new Set([...chain.keys(), ...ledgerExternal.keys()])) {
    const expected = chain.get(k) ?? new Money(0);
    const actual = ledgerExternal.get(k) ?? new Money(0);
    if (!expected.eq(actual)) problems.push({ check: 'chain-records', mode: modeOf(k.split('/')[0]), key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }

  for (const found of [await invoiceStatusProblems(db), await withdrawalStatusProblems(db), await depositStatusProblems(db), ...(await Promise.all(featureChecks.map((check) => check(db))))]) {
    problems.push(...found.map(({ companyId, ...p }) => ({ ...p, mode: modeOf(companyId) })));
  }

  const counts = await db.$queryRaw<{ mode: Mode; journals: number; entries: number }[]>`
    SELECT c."mode", COUNT(DISTINCT e."journalId")::int AS journals, COUNT(*)::int AS entries
    FROM "LedgerEntry" e JOIN "Company" c ON c."id" = e."companyId" GROUP BY c."mode"`;
  const checked = MODES.filter((m) => !options.mode || m === options.mode);
  const mine = problems.filter((p) => checked.includes(p.mode));
  const mineCounts = counts.filter((c) => checked.includes(c.mode));
  return {
    ok: mine.length === 0,
    mode: options.mode ?? null,
    journals: mineCounts.reduce((n, c) => n + c.journals, 0),
    entries: mineCounts.reduce((n, c) => n + c.entries, 0),
    balances: options.mode ? [...running.keys()].filter((k) => checked.includes(modeOf(k.split('/')[0]))).length : balances.length,
    problems: mine,
    modes: Object.fromEntries(
      checked.map((m) => {
        const n = mine.filter((p) => p.mode === m).length;
        return [m, { ok: n === 0, journals: counts.find((c) => c.mode === m)?.journals ?? 0, problems: n }];
      }),
    ),
    custodySurpluses: checked.includes('live') ? custodySurpluses : [],
  };
}

/**
 * Per invoice: paidAmount equals its confirmed transfers and the merchant's credits for them; done has money
 * (at least the tolerated share of the amount unless the merchant accepted it) and exactly its fee; nothing
 * else carries a fee; created and pending have received nothing final; wrong has; refunded has its refund.
 * One statement that returns only the invoices that break a rule, with the first rule they break.
 */
/** A problem of one company's object, before its mode is known. */
export type CompanyProblem = Omit<LedgerProblem, 'mode'> & { companyId: string };

/** A feature's own checks (src/<feature>/ledger-checks.ts), registered when its module loads (the layers: ledger imports no feature). */
export type FeatureLedgerCheck = (db: Db) => Promise<CompanyProblem[]>;
const featureChecks: FeatureLedgerCheck[] = [];

export function registerLedgerCheck(check: FeatureLedgerCheck): void {
  if (!featureChecks.includes(check)) featureChecks.push(check);
}

async function invoiceStatusProblems(db: Db): Promise<CompanyProblem[]> {
  const minShare = new Money(100 - MAX_UNDERPAYMENT_PERCENT).div(100).toFixed();
  const rows = await db.$queryRaw<Row[]>`
    WITH transfers AS (
      SELECT "invoiceId", SUM("amount") AS confirmed FROM "ChainTransfer"
      WHERE "state" = 'confirmed' AND "role" IN ('payment', 'late') GROUP BY "invoiceId"
    ), entries AS (
      SELECT "invoiceId",
        SUM(CASE WHEN "kind" IN ('payment', 'late_payment') AND "account" = ${ACCOUNTS.merchantAvailable} THEN "amount" ELSE 0 END) AS credited,
        SUM(CASE WHEN "kind" = 'fee' AND "account" = ${ACCOUNTS.platformFees} THEN "amount" ELSE 0 END) AS fee,
        COUNT(*) FILTER (WHERE "kind" = 'fee' AND "account" = ${ACCOUNTS.platformFees}) AS "feeJournals",
        COUNT(*) FILTER (WHERE "kind" = 'refund') AS "refundEntries"
      FROM "LedgerEntry" WHERE "invoiceId" IS NOT NULL GROUP BY "invoiceId"
    ), checked AS (
      SELECT i."id", i."companyId", i."status"::text AS status, i."paidAmount" AS paid,
        COALESCE(t.confirmed, 0) AS confirmed, COALESCE(e.credited, 0) AS credited, COALESCE(e.fee, 0) AS fee,
        CASE
          WHEN i."paidAmount" <> COALESCE(t.confirmed, 0) THEN 'paidAmount differs from the confirmed transfers'
          WHEN COALESCE(e.credited, 0) <> COALESCE(t.confirmed, 0) THEN 'the merchant credits differ from the confirmed transfers'
          WHEN i."status" = 'done' AND i."paidAmount" <= 0 THEN 'done without confirmed money'
          WHEN i."status" = 'done' AND i."acceptedAt" IS NULL AND i."paidAmount" < i."paymentAmount" * ${minShare}::numeric
            THEN 'done with less than the tolerated share of the amount, not accepted by the merchant'
          WHEN i."status" = 'done' AND (i."feeCharged" IS NULL OR COALESCE(e."feeJournals", 0) = 0 OR COALESCE(e.fee, 0) <> i."feeCharged")
            THEN 'done without its fee journal'
          WHEN i."status" = 'done' AND i."feeCharged" <> LEAST(i."invoiceFee", i."paidAmount") THEN 'done with a fee other than min(invoiceFee, paid)'
          WHEN i."status" <> 'done' AND (i."feeCharged" IS NOT NULL OR COALESCE(e."feeJournals", 0) > 0) THEN 'a fee on an invoice that is not done'
          WHEN i."status" IN ('created', 'pending') AND i."paidAmount" <> 0 THEN 'confirmed money on an invoice nobody paid'
          WHEN i."status" = 'wrong' AND i."paidAmount" <= 0 THEN 'wrong without confirmed money'
          WHEN i."status" = 'refunded' AND (NOT EXISTS (SELECT 1 FROM "Refund" r WHERE r."invoiceId" = i."id") OR COALESCE(e."refundEntries", 0) = 0)
            THEN 'refunded without its refund and journal'
        END AS problem
      FROM "Invoice" i LEFT JOIN transfers t ON t."invoiceId" = i."id" LEFT JOIN entries e ON e."invoiceId" = i."id"
    )
    SELECT "id", "companyId"::text AS "companyId", status, paid::text AS paid, confirmed::text AS confirmed, problem FROM checked WHERE problem IS NOT NULL
    ORDER BY "id" LIMIT 1000`;
  return rows.map((r) => ({
    check: 'invoice-status' as const,
    companyId: String(r['companyId']),
    key: key(r['id'], r['status']),
    expected: 'status consistent with money',
    actual: `${String(r['problem'])} (paid ${new Money(String(r['paid'])).toFixed()}, confirmed ${new Money(String(r['confirmed'])).toFixed()})`,
  }));
}

/**
 * Per withdrawal: its hold is exactly amount plus fee; processing still holds it; done released it into the chain
 * (amount) and the network fee; rejected gave it back to available. One statement, offenders only.
 */
async function withdrawalStatusProblems(db: Db): Promise<CompanyProblem[]> {
  const rows = await db.$queryRaw<Row[]>`
    WITH entries AS (
      SELECT "withdrawalId",
        SUM(CASE WHEN "kind" = 'withdrawal_hold' AND "account" = ${ACCOUNTS.merchantHeld} THEN "amount" ELSE 0 END) AS held,
        SUM(CASE WHEN "account" = ${ACCOUNTS.merchantHeld} THEN "amount" ELSE 0 END) AS "stillHeld",
        SUM(CASE WHEN "kind" = 'withdrawal' AND "account" = ${ACCOUNTS.chainExternal} THEN "amount" ELSE 0 END) AS sent,
        SUM(CASE WHEN "kind" = 'withdrawal' AND "account" = ${ACCOUNTS.networkFees} THEN "amount" ELSE 0 END) AS fee,
        SUM(CASE WHEN "kind" = 'withdrawal_release' AND "account" = ${ACCOUNTS.merchantAvailable} THEN "amount" ELSE 0 END) AS released
      FROM "LedgerEntry" WHERE "withdrawalId" IS NOT NULL GROUP BY "withdrawalId"
    ), checked AS (
      SELECT w."uid", w."companyId", w."status",
        CASE
          WHEN COALESCE(e.held, 0) <> w."amount" + w."fee" THEN 'its hold is not amount plus fee'
          WHEN w."status" = 'processing' AND (e."stillHeld" <> e.held OR e.sent <> 0 OR e.released <> 0) THEN 'processing without its whole hold'
          WHEN w."status" = 'done' AND (e."stillHeld" <> 0 OR e.sent <> w."amount" OR e.fee <> w."fee" OR e.released <> 0) THEN 'done without its final debit'
          WHEN w."status" = 'rejected' AND (e."stillHeld" <> 0 OR e.released <> e.held OR e.sent <> 0) THEN 'rejected without its release'
        END AS problem
      FROM "Withdrawal" w LEFT JOIN entries e ON e."withdrawalId" = w."uid"
    )
    SELECT "uid"::text AS uid, "companyId"::text AS "companyId", "status", problem FROM checked WHERE problem IS NOT NULL ORDER BY "uid" LIMIT 1000`;
  return rows.map((r) => ({
    check: 'withdrawal-status' as const,
    companyId: String(r['companyId']),
    key: key(r['uid'], r['status']),
    expected: 'ledger consistent with the withdrawal status',
    actual: String(r['problem']),
  }));
}

/**
 * Per deposit to a static address: confirmed has exactly its credit (the amount) and at most one fee journal (between
 * 0 and the amount; none when the fee rule makes it 0); seen, dropped and frozen have no entries at all.
 */
async function depositStatusProblems(db: Db): Promise<CompanyProblem[]> {
  const rows = await db.$queryRaw<Row[]>`
    WITH entries AS (
      SELECT "transferId",
        SUM(CASE WHEN "kind" = 'deposit' AND "account" = ${ACCOUNTS.merchantAvailable} THEN "amount" ELSE 0 END) AS credited,
        SUM(CASE WHEN "kind" = 'deposit_fee' AND "account" = ${ACCOUNTS.platformFees} THEN "amount" ELSE 0 END) AS fee,
        COUNT(DISTINCT "journalId") FILTER (WHERE "kind" = 'deposit_fee') AS "feeJournals",
        COUNT(*) AS n
      FROM "LedgerEntry" WHERE "transferId" IS NOT NULL AND "kind" IN ('deposit', 'deposit_fee') GROUP BY "transferId"
    ), checked AS (
      SELECT t."id", t."companyId", t."state"::text AS state,
        CASE
          WHEN t."state" = 'confirmed' AND COALESCE(e.credited, 0) <> t."amount" THEN 'confirmed without its credit'
          WHEN t."state" = 'confirmed' AND (COALESCE(e."feeJournals", 0) > 1 OR e.fee < 0 OR e.fee > t."amount") THEN 'confirmed with more than one fee, or one outside the amount'
          WHEN t."state" <> 'confirmed' AND COALESCE(e.n, 0) > 0 THEN 'ledger entries for a deposit that is not confirmed'
        END AS problem
      FROM "ChainTransfer" t LEFT JOIN entries e ON e."transferId" = t."id"
      WHERE t."role" = 'deposit'
    )
    SELECT "id"::text AS id, "companyId"::text AS "companyId", state, problem FROM checked WHERE problem IS NOT NULL ORDER BY "id" LIMIT 1000`;
  return rows.map((r) => ({
    check: 'deposit-status' as const,
    companyId: String(r['companyId']),
    key: key(r['id'], r['state']),
    expected: 'ledger consistent with the deposit status',
    actual: String(r['problem']),
  }));
}
