// ledger:verify's check of autoswaps (declared in declarations.ts): per swap, its hold is its amount; queued
// and submitted still hold it; done moved it to the venue and has the target leg and its fees; failed released it.
import type { Db } from '../db/client.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import type { CompanyProblem, LedgerCheck } from '../ledger/verify.ts';

type Row = Record<string, unknown>;

async function autoswapProblems(db: Db): Promise<CompanyProblem[]> {
  const rows = await db.$queryRaw<Row[]>`
    WITH entries AS (
      SELECT e."subjectId",
        SUM(CASE WHEN e."kind" = 'autoswap_hold' AND e."account" = 'swap_hold' THEN e."amount" ELSE 0 END) AS held,
        SUM(CASE WHEN e."account" = 'swap_hold' THEN e."amount" ELSE 0 END) AS "stillHeld",
        SUM(CASE WHEN e."kind" = 'autoswap' AND e."account" = 'swap_venue' AND e."asset" = s."fromCurrency" THEN e."amount" ELSE 0 END) AS sold,
        SUM(CASE WHEN e."kind" = 'autoswap' AND e."account" = ${ACCOUNTS.merchantAvailable} AND e."asset" = s."toCurrency" THEN e."amount" ELSE 0 END) AS bought,
        SUM(CASE WHEN e."kind" = 'autoswap_venue_fee' AND e."account" = 'venue_fees' THEN e."amount" ELSE 0 END) AS "venueFee",
        SUM(CASE WHEN e."kind" = 'autoswap_fee' AND e."account" = ${ACCOUNTS.platformFees} THEN e."amount" ELSE 0 END) AS fee,
        SUM(CASE WHEN e."kind" = 'autoswap_release' AND e."account" = ${ACCOUNTS.merchantAvailable} THEN e."amount" ELSE 0 END) AS released
      FROM "LedgerEntry" e JOIN "AutoSwap" s ON s."id" = e."subjectId"
      GROUP BY e."subjectId"
    ), checked AS (
      SELECT s."id", s."companyId", s."status",
        CASE
          WHEN COALESCE(e.held, 0) <> s."amount" THEN 'its hold is not its amount'
          WHEN s."status" IN ('queued', 'submitted') AND (e."stillHeld" <> e.held OR e.sold <> 0 OR e.bought <> 0 OR e.released <> 0) THEN 'in flight without its whole hold'
          WHEN s."status" = 'done' AND (e."stillHeld" <> 0 OR e.sold <> s."amount" OR e.released <> 0) THEN 'done without its source leg'
          WHEN s."status" = 'done' AND (s."toAmount" IS NULL OR e.bought <> s."toAmount" + COALESCE(s."venueFee", 0) + COALESCE(s."fee", 0)
            OR e."venueFee" <> COALESCE(s."venueFee", 0) OR e.fee <> COALESCE(s."fee", 0)) THEN 'done without its target leg and fees'
          WHEN s."status" = 'failed' AND (e."stillHeld" <> 0 OR e.released <> e.held OR e.sold <> 0 OR e.bought <> 0) THEN 'failed without its release'
        END AS problem
      FROM "AutoSwap" s LEFT JOIN entries e ON e."subjectId" = s."id"
    )
    SELECT "id"::text AS id, "companyId"::text AS "companyId", "status", problem FROM checked WHERE problem IS NOT NULL ORDER BY "id" LIMIT 1000`;
  return rows.map((r) => ({
    check: 'autoswap-status',
    companyId: String(r['companyId']),
    key: `${String(r['id'])}/${String(r['status'])}`,
    expected: 'ledger consistent with the autoswap status',
    actual: String(r['problem']),
  }));
}

export const autoswapStatusCheck: LedgerCheck = { name: 'autoswap-status', problems: autoswapProblems };
