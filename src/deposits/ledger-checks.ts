// Deposits to static addresses against their money, for ledger:verify (Feature.declares.ledgerChecks).
import type { Db } from '../db/client.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import { key, type CompanyProblem, type LedgerCheck } from '../ledger/verify.ts';

type Row = Record<string, unknown>;

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

export const depositStatusCheck: LedgerCheck = { name: 'deposit-status', problems: depositStatusProblems };
