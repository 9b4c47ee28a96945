// The dashboard's overview of a merchant's invoices: money received per day and invoices by status over the last
// days, computed in SQL (GROUP BY over the company's own rows, never every invoice loaded). Days are UTC calendar
// days (no merchant time zone is stored; docs/dashboard.md, "Overview"); "now" is the company's clock, so a test-mode
// merchant's test clock moves the window with its invoices.
import { z } from 'zod';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../clock.ts';
import type { Company } from '../core/auth.ts';
import type { Db } from '../db/client.ts';
import { isInvoiceCurrency, PRICE_PRECISION } from '../domain/assets.ts';
import { formatFixed } from '../domain/money.ts';
import { INVOICE_STATUSES, type InvoiceStatus } from './status.ts';

export const OVERVIEW_DEFAULT_DAYS = 30;
export const OVERVIEW_MAX_DAYS = 366;
export const overviewSchema = z.object({ days: z.number().int().min(1).max(OVERVIEW_MAX_DAYS) });

export interface DailyReceived {
  /** The UTC calendar day, YYYY-MM-DD. */
  day: string;
  currency: string;
  /** The invoices' totals, in `currency`, at its price precision. */
  amount: string;
  invoices: number;
}

export interface InvoiceOverview {
  /** Midnight UTC of the first day. */
  from: Date;
  /** The company's now (the window's end). */
  to: Date;
  days: number;
  timeZone: 'UTC';
  /** Only days and currencies with money, by day then currency. */
  received: DailyReceived[];
  /** Every status, zero included, of the invoices created in the window. */
  byStatus: { status: InvoiceStatus; count: number }[];
}

const DAY_MS = 86_400_000;

/** Midnight UTC `days - 1` days before `now`'s day: the window holds `days` calendar days, today included. */
export function windowStart(now: Date, days: number): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * DAY_MS);
}

export async function invoiceOverview(deps: { db: Db; clock: Clock }, company: Pick<Company, 'id'>, days: number): Promise<InvoiceOverview> {
  const now = await deps.clock.now(company.id);
  const from = windowStart(now, days);
  // Received: what done invoices were sold for, on the day they became done (settledAt, on the company's clock).
  const received = await deps.db.$queryRaw<{ day: string; currency: string; amount: string; invoices: number }[]>(Prisma.sql`
    SELECT to_char(date_trunc('day', i."settledAt" AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS "day",
           i."invoiceCurrency" AS "currency", SUM(i."total")::text AS "amount", COUNT(*)::int AS "invoices"
    FROM "Invoice" i
    WHERE i."companyId" = ${company.id}::uuid AND i."status" = 'done' AND i."settledAt" >= ${from} AND i."settledAt" <= ${now}
    GROUP BY 1, 2
    ORDER BY 1, 2`);
  const counts = await deps.db.$queryRaw<{ status: InvoiceStatus; count: number }[]>(Prisma.sql`
    SELECT i."status"::text AS "status", COUNT(*)::int AS "count"
    FROM "Invoice" i
    WHERE i."companyId" = ${company.id}::uuid AND i."createdAt" >= ${from} AND i."createdAt" <= ${now}
    GROUP BY 1`);
  const byStatus = new Map(counts.map((c) => [c.status, Number(c.count)]));
  return {
    from,
    to: now,
    days,
    timeZone: 'UTC',
    received: received.map((r) => ({
      day: r.day,
      currency: r.currency,
      amount: formatFixed(r.amount, isInvoiceCurrency(r.currency) ? PRICE_PRECISION[r.currency] : 18),
      invoices: Number(r.invoices),
    })),
    byStatus: INVOICE_STATUSES.map((status) => ({ status, count: byStatus.get(status) ?? 0 })),
  };
}
