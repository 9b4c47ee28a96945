// Invoices against their money, for ledger:verify (Feature.declares.ledgerChecks): paidAmount, credits, the fee
// journal and the refund agree with each invoice's status.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import { key, type CompanyProblem, type LedgerCheck } from '../ledger/verify.ts';
import { Money } from '../domain/money.ts';
import { MAX_UNDERPAYMENT_PERCENT } from '../domain/settlement.ts';

type Row = Record<string, unknown>;

/**
 * Per invoice: paidAmount equals its confirmed transfers and the merchant's credits for them; done has money
 * (at least the tolerated share of the amount unless the merchant accepted it) and exactly its fee; nothing
 * else carries a fee; created and pending have received nothing final; wrong has; refunded has its refund.
 * One statement that returns only the invoices that break a rule, with the first rule they break.
 */
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

export const invoiceStatusCheck: LedgerCheck = {
  name: 'invoice-status',
  problems: invoiceStatusProblems,
  // A refund is recorded once it is sent.
  paidOut: Prisma.sql`SELECT "companyId"::text AS "companyId", "asset", "amount" FROM "Refund"`,
};
