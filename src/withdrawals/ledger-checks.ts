// Withdrawals against their money, for ledger:verify (Feature.declares.ledgerChecks): each status has exactly the
// hold, debit or release it implies.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import { key, type CompanyProblem, type LedgerCheck } from '../ledger/verify.ts';

type Row = Record<string, unknown>;

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

export const withdrawalStatusCheck: LedgerCheck = {
  name: 'withdrawal-status',
  problems: withdrawalStatusProblems,
  paidOut: Prisma.sql`SELECT "companyId"::text AS "companyId", "asset", "amount" FROM "Withdrawal" WHERE "status" = 'done'`,
};
