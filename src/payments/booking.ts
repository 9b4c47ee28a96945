// What a transfer report writes, shared by the two ways of booking it (processor.ts): the transfer row, its credit
// journal and its events; and the one-statement way of the common case (a new transfer to an open invoice of a
// merchant without credit-hook rules), which writes all of it, the invoice's move and the fee in ONE statement,
// for several reports at once (batch.ts).
import { randomUUID } from 'node:crypto';
import { Prisma, type ChainTransfer, type Invoice, type PaymentAddress, type TransferRole } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import { queryDirect } from '../db/direct.ts';
import { columnsOf, prepared } from '../db/prepared.ts';
import { eventsCtes, type NewEvent } from '../core/events.ts';
import type { Mode } from '../domain/modes.ts';
import { toMoney } from '../domain/money.ts';
import { LimitExceededError } from '../errors/app-error.ts';
import { factsFrom, factsRowSql, planMove, transferTotalsSql, type Facts, type FactsRow, type InvoiceChange, type LifecycleDeps, type MoveSubject } from '../invoices/lifecycle.ts';
import { ACCOUNTS, bookableInStatement, journalsInStatement, type Journal } from '../ledger/ledger.ts';
import { INVOICE_CONFIRMATIONS } from './declarations.ts';

/** What a transfer to an invoice's address is: the payment, a late one, or one in an asset the invoice does not expect. */
export const roleOf = (report: TransferReport, address: PaymentAddress, status: string): TransferRole =>
  report.asset !== address.asset ? 'wrong_asset' : status === 'closed' || status === 'refunded' ? 'late' : 'payment';

export interface NewTransfer {
  report: TransferReport;
  mode: Mode;
  role: TransferRole;
  confirmed: boolean;
  companyId: string;
  invoiceId: string;
  addressId: string;
  now: Date;
}

/** A new transfer with the id it is written with. */
type TransferRow = NewTransfer & { id: string };

/**
 * The INSERT of new transfers (one row each, in one statement) where `when` holds. A known output is left alone
 * (`ignore`: RETURNING gives no row for it) or fails the statement on the unique index (`fail`).
 */
export function insertTransfersSql(rows: TransferRow[], when: Prisma.Sql, onKnown: 'ignore' | 'fail'): Prisma.Sql {
  const col = <T>(pick: (t: TransferRow) => T) => rows.map(pick);
  return Prisma.sql`INSERT INTO "ChainTransfer" ("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
      "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
    SELECT t."id", t."mode"::"Mode", t."network", t."asset", t."txHash", t."outputIndex", t."fromAddress", t."toAddress", t."tag", t."amount",
      t."confirmations", t."blockNumber", t."state"::"TransferState", t."role"::"TransferRole", t."companyId", t."invoiceId", t."addressId", t."seenAt", t."confirmedAt"
    FROM unnest(${col((t) => t.id)}::uuid[], ${col((t) => t.mode)}::text[], ${col((t) => t.report.network)}::text[], ${col((t) => t.report.asset)}::text[],
      ${col((t) => t.report.txHash)}::text[], ${col((t) => t.report.outputIndex)}::int[], ${col((t) => t.report.from)}::text[], ${col((t) => t.report.to)}::text[],
      ${col((t) => t.report.tag)}::text[], ${col((t) => t.report.amount.toFixed())}::numeric[], ${col((t) => t.report.confirmations)}::int[],
      ${col((t) => (t.report.blockNumber === null ? null : String(t.report.blockNumber)))}::bigint[], ${col((t) => (t.confirmed ? 'confirmed' : 'seen'))}::text[],
      ${col((t) => t.role)}::text[], ${col((t) => t.companyId)}::uuid[], ${col((t) => t.invoiceId)}::text[], ${col((t) => t.addressId)}::text[],
      ${col((t) => t.now.toISOString())}::timestamptz[], ${col((t) => (t.confirmed ? t.now.toISOString() : null))}::timestamptz[])
      AS t("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount", "confirmations", "blockNumber", "state",
        "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
    WHERE ${when}
    ${onKnown === 'ignore' ? Prisma.sql`ON CONFLICT ("mode", "network", "txHash", "outputIndex") DO NOTHING` : Prisma.empty}
    RETURNING ${columnsOf(Prisma.ChainTransferScalarFieldEnum)}`;
}

/** The already recorded ones among these transfers' outputs (a query for EXISTS). */
function knownOutputsSql(rows: TransferRow[]): Prisma.Sql {
  const col = <T>(pick: (t: TransferRow) => T) => rows.map(pick);
  return Prisma.sql`SELECT 1 FROM unnest(${col((t) => t.mode)}::text[], ${col((t) => t.report.network)}::text[], ${col((t) => t.report.txHash)}::text[],
      ${col((t) => t.report.outputIndex)}::int[]) AS k("mode", "network", "txHash", "outputIndex")
    JOIN "ChainTransfer" c ON c."mode" = k."mode"::"Mode" AND c."network" = k."network" AND c."txHash" = k."txHash" AND c."outputIndex" = k."outputIndex"`;
}

type TransferFacts = Pick<ChainTransfer, 'id' | 'companyId' | 'asset' | 'amount' | 'role' | 'invoiceId' | 'txHash' | 'confirmations'>;

/** The journal of a transfer that just became final: the merchant's money (or suspense for an unexpected asset). */
export function creditJournal(transfer: TransferFacts): Journal {
  const amount = toMoney(transfer.amount);
  const expected = transfer.role !== 'wrong_asset';
  return {
    companyId: transfer.companyId,
    asset: transfer.asset,
    kind: !expected ? 'unexpected_asset' : transfer.role === 'late' ? 'late_payment' : 'payment',
    postings: [
      { account: ACCOUNTS.chainExternal, amount: amount.neg() },
      { account: expected ? ACCOUNTS.merchantAvailable : ACCOUNTS.merchantSuspense, amount },
    ],
    invoiceId: transfer.invoiceId,
    transferId: transfer.id,
  };
}

/**
 * The events of a report besides the invoice's status event, in the order they are recorded: the new confirmation
 * count when the status stayed (live subscriptions, docs/live.md), and the notice of a final transfer in an
 * unexpected asset or after the invoice closed.
 */
export function reportEvents(args: {
  transfer: TransferFacts & Pick<ChainTransfer, 'state'>;
  invoiceId: string;
  statusBefore: string;
  statusAfter: string;
  becameConfirmed: boolean;
  requiredConfirmations: number;
}): NewEvent[] {
  const { transfer, invoiceId, statusAfter: status } = args;
  const events: NewEvent[] = [];
  const subject = { type: 'invoice', id: invoiceId };
  if (transfer.role !== 'wrong_asset' && transfer.state !== 'dropped' && status === args.statusBefore) {
    events.push({
      type: INVOICE_CONFIRMATIONS,
      companyId: transfer.companyId,
      subject,
      payload: { invoiceId, status, transferId: transfer.id, confirmations: transfer.confirmations, requiredConfirmations: args.requiredConfirmations },
      deliver: false,
    });
  }
  const notice = !args.becameConfirmed
    ? null
    : transfer.role === 'wrong_asset'
      ? (['invoice.unexpected_asset', 'Payment received in an asset or network this invoice does not expect'] as const)
      : status === 'closed' || status === 'refunded'
        ? (['invoice.late_payment', 'Payment received after the invoice closed'] as const)
        : null;
  if (notice) {
    const [type, message] = notice;
    // Outside the spec's webhook table: recorded for the events feed and the bus, not pushed.
    events.push({
      type,
      companyId: transfer.companyId,
      subject,
      payload: { invoiceId, status, message, asset: transfer.asset, amount: toMoney(transfer.amount).toFixed(), txHash: transfer.txHash },
      deliver: false,
    });
  }
  return events;
}

/** What the one-statement way needs of the invoice, read with its address (snapshotJoin). */
export interface InvoiceSnapshot {
  invoice: MoveSubject & Pick<Invoice, 'paymentAmount' | 'expiredAt'>;
  facts: FactsRow;
  /** The row version read (xmin): every change to an invoice's payments rewrites its row. */
  version: string;
  /** Some credit hook may act on a credit of the report's asset (an autoswap or auto-withdrawal rule). */
  hooked: boolean;
}

/**
 * A join for the address lookup (alias `a`): the invoice of the address as InvoiceSnapshot's columns (`s_*`), if any.
 * Its totals and hook rules are those of the address's asset: the one-statement way books nothing else.
 */
export function snapshotJoin(deps: Pick<LifecycleDeps, 'credits'>): Prisma.Sql {
  return Prisma.sql`LEFT JOIN LATERAL (
      SELECT i."status" AS s_status, i."paymentAmount" AS "s_paymentAmount", i."invoiceFee" AS "s_invoiceFee", i."paymentCurrency" AS "s_paymentCurrency",
        i."orderId" AS "s_orderId", i."metadata" AS s_metadata, i."settlement" AS s_settlement, i."expiredAt" AS "s_expiredAt", i.xmin::text AS s_version,
        f.confirmed AS s_confirmed, f.unconfirmed AS s_unconfirmed, f."fixed" AS s_fixed, f."percent" AS s_percent, f.limited AS s_limited,
        ${deps.credits.mayAct(Prisma.sql`i."companyId"`, Prisma.sql`a."asset"`)} AS s_hooked
      FROM "Invoice" i CROSS JOIN LATERAL (${factsRowSql(Prisma.sql`i."id"`, Prisma.sql`i."companyId"`, Prisma.sql`a."asset"`)}) f
      WHERE i."id" = a."invoiceId" AND i."companyId" = a."companyId"
    ) s ON TRUE`;
}

/** The columns snapshotJoin adds (all null without an invoice). */
export interface SnapshotColumns {
  s_status: Invoice['status'] | null;
  s_paymentAmount: Invoice['paymentAmount'];
  s_invoiceFee: Invoice['invoiceFee'];
  s_paymentCurrency: Invoice['paymentCurrency'];
  s_orderId: Invoice['orderId'];
  s_metadata: Invoice['metadata'];
  s_settlement: Invoice['settlement'];
  s_expiredAt: Invoice['expiredAt'];
  s_version: string;
  s_confirmed: FactsRow['confirmed'];
  s_unconfirmed: number;
  s_fixed: FactsRow['fixed'];
  s_percent: FactsRow['percent'];
  s_limited: boolean;
  s_hooked: boolean;
}

/** The snapshot in a row of the address query (null without an invoice). */
export function snapshotOf(row: PaymentAddress & SnapshotColumns): InvoiceSnapshot | null {
  if (!row.invoiceId || row.s_status === null) return null;
  return {
    invoice: {
      id: row.invoiceId, companyId: row.companyId, status: row.s_status, paymentAmount: row.s_paymentAmount, invoiceFee: row.s_invoiceFee,
      paymentCurrency: row.s_paymentCurrency, orderId: row.s_orderId, metadata: row.s_metadata, settlement: row.s_settlement, expiredAt: row.s_expiredAt,
    },
    facts: { confirmed: row.s_confirmed, unconfirmed: row.s_unconfirmed, fixed: row.s_fixed, percent: row.s_percent, limited: row.s_limited },
    version: row.s_version,
    hooked: row.s_hooked,
  };
}

/**
 * The invoice columns a payment's move may set (planMove with the payment trigger), with their types: the statement
 * sets each from an array (null: unchanged). A move that sets any other takes the transaction.
 */
const PAYMENT_CHANGE = { status: '"InvoiceStatus"', paidAmount: 'numeric', overpaidAmount: 'numeric', feeCharged: 'numeric', settledAt: 'timestamptz' } as const;
const PAYMENT_CHANGE_COLUMNS = Object.keys(PAYMENT_CHANGE) as (keyof typeof PAYMENT_CHANGE)[];

/**
 * A report booked the one-statement way, planned from the snapshot (pure): what the statement checks (the invoice's
 * row version, its transfer totals, no credit hook) and everything it writes when they hold.
 */
export interface PlannedBooking {
  mode: Mode;
  companyId: string;
  asset: string;
  invoiceId: string;
  version: string;
  /** The transfer totals the move was planned on. */
  confirmedBefore: string;
  unconfirmedBefore: number;
  /** A final transfer: no credit hook may act on it. */
  credits: boolean;
  transfer: TransferRow;
  journals: Journal[];
  change: InvoiceChange;
  events: NewEvent[];
}

/**
 * The common case, planned to be booked in one statement outside an interactive transaction: a new transfer in the
 * invoice's asset to an invoice that is not past its window, where no credit hook may act (no autoswap or
 * auto-withdrawal rule). The invoice and its facts were read with the address (no lock). Null when the report
 * takes the general way (a transaction), which also answers duplicates and limits.
 */
export function planBooking(deps: LifecycleDeps, report: TransferReport, mode: Mode, address: PaymentAddress, snapshot: InvoiceSnapshot | null, now: Date): PlannedBooking | null {
  if (!snapshot || report.dropped || report.asset !== address.asset || !address.invoiceId) return null;
  const { invoice, version } = snapshot;
  const invoiceId = address.invoiceId;
  if (invoice.status === 'created') return null;
  // Past its window: the general way closes it first.
  const open = invoice.status === 'pending' || invoice.status === 'processing';
  if (open && invoice.expiredAt && invoice.expiredAt <= now) return null;

  const required = deps.chains.requiredConfirmations(report.asset, mode);
  const confirmed = report.confirmations >= required;
  if (confirmed && snapshot.hooked) return null;
  const role = roleOf(report, address, invoice.status);
  const before = factsFrom(invoice, snapshot.facts);
  const facts: Facts = {
    ...before,
    confirmedTotal: confirmed ? before.confirmedTotal.plus(report.amount) : before.confirmedTotal,
    unconfirmedCount: before.unconfirmedCount + (!confirmed && role === 'payment' ? 1 : 0),
  };
  let move;
  try {
    move = planMove(invoice, facts, 'payment', now);
  } catch (e) {
    if (e instanceof LimitExceededError) return null; // the general way refuses it and freezes the transfer
    throw e;
  }
  if (Object.keys(move.change).some((column) => !(column in PAYMENT_CHANGE))) return null;
  const transferId = randomUUID();
  const transfer = {
    id: transferId, companyId: invoice.companyId, asset: report.asset, amount: new Prisma.Decimal(report.amount.toFixed()), role, invoiceId,
    txHash: report.txHash, confirmations: report.confirmations, state: confirmed ? 'confirmed' : 'seen',
  } as const;
  const journals = [...(confirmed ? [creditJournal(transfer)] : []), ...(move.fee ? [move.fee] : [])];
  // A fee beyond this transfer's credit debits earlier money: that takes the exact check of the general way.
  if (!bookableInStatement(journals)) return null;
  return {
    mode,
    companyId: invoice.companyId,
    asset: report.asset,
    invoiceId,
    version,
    confirmedBefore: toMoney(snapshot.facts.confirmed).toFixed(),
    unconfirmedBefore: before.unconfirmedCount,
    credits: confirmed,
    transfer: { id: transferId, report, mode, role, confirmed, companyId: invoice.companyId, invoiceId, addressId: address.id, now },
    journals,
    change: move.change,
    events: [
      ...(move.event ? [move.event] : []),
      ...reportEvents({ transfer, invoiceId, statusBefore: invoice.status, statusAfter: move.status, becameConfirmed: confirmed, requiredConfirmations: required }),
    ],
  };
}

/** Bookings one statement writes together: of one mode, company and asset, each of its own invoice and output. */
export const bookingGroup = (b: PlannedBooking): string => `${b.mode}/${b.companyId}/${b.asset}`;

/**
 * Writes planned bookings of one group (bookingGroup; distinct invoices and outputs) in ONE statement, all or none:
 * it locks each invoice only if it is still the row version planned on, re-checks the transfer totals, that no
 * output is known yet and no credit hook may act, and writes the transfers, the journals (their balance moves
 * netted: one row move per account for all of them), the invoices' moves and the events (in list order), each only
 * if all of that holds and every balance stays within its limit. Answers the transfers written, in list order, or
 * an empty list when it wrote nothing. Another report of the same output committing meanwhile makes it fail on
 * the unique index (then too it wrote nothing).
 */
export async function bookPlanned(deps: LifecycleDeps, planned: PlannedBooking[]): Promise<ChainTransfer[]> {
  const [first] = planned;
  if (!first) return [];
  const journals = journalsInStatement(planned.flatMap((p) => p.journals), Prisma.sql`(SELECT "ok" FROM checked)`);
  if (!journals) throw new Error('bookPlanned: journals planned that the statement cannot book');
  const events = planned.flatMap((p) => p.events);
  const go = Prisma.sql`(SELECT "ok" FROM checked) AND ${journals.fits}`;
  const column = <T>(pick: (p: PlannedBooking) => T) => planned.map(pick);
  const change = (name: keyof typeof PAYMENT_CHANGE) =>
    column((p) => {
      const value = p.change[name] ?? null;
      return value instanceof Date ? value.toISOString() : value;
    });
  const quoted = (name: string) => Prisma.raw(`"${name}"`);
  // Each value once per booking, as arrays: the same statement text for any number of bookings (one named statement).
  const rows = await queryDirect<ChainTransfer>(deps.db, prepared(Prisma.sql`
    WITH b ("id", "version", "confirmed", "unconfirmed") AS (
      SELECT * FROM unnest(${column((p) => p.invoiceId)}::text[], ${column((p) => p.version)}::text[], ${column((p) => p.confirmedBefore)}::numeric[],
        ${column((p) => p.unconfirmedBefore)}::int[])
    ),
    locked AS (SELECT i."id" FROM "Invoice" i JOIN b ON b."id" = i."id" WHERE i.xmin = b."version"::xid ORDER BY i."id" FOR UPDATE OF i),
    checked AS (
      SELECT (SELECT count(*) FROM locked) = count(*) AND COALESCE(bool_and(t."confirmed" = b."confirmed" AND t."unconfirmed" = b."unconfirmed"), FALSE)
        AND NOT EXISTS (${knownOutputsSql(planned.map((p) => p.transfer))})
        AND NOT (${planned.some((p) => p.credits)}::boolean AND ${deps.credits.mayAct(Prisma.sql`${first.companyId}::uuid`, Prisma.sql`${first.asset}::text`)}) AS "ok"
      FROM b CROSS JOIN LATERAL (${transferTotalsSql(Prisma.sql`b."id"`)}) t
    ),
    ${journals.ctes}
    new_transfer AS (${insertTransfersSql(planned.map((p) => p.transfer), go, 'fail')}),
    changed AS (
      UPDATE "Invoice" i SET ${Prisma.join(PAYMENT_CHANGE_COLUMNS.map((c) => Prisma.sql`${quoted(c)} = COALESCE(v.${quoted(c)}, i.${quoted(c)})`))}, "updatedAt" = now()
      FROM unnest(${column((p) => p.invoiceId)}::text[], ${Prisma.join(PAYMENT_CHANGE_COLUMNS.map((c) => Prisma.sql`${change(c)}::${Prisma.raw(PAYMENT_CHANGE[c])}[]`))})
        AS v("id", ${Prisma.join(PAYMENT_CHANGE_COLUMNS.map(quoted))})
      WHERE i."id" = v."id" AND ${go}
      RETURNING i."id"
    ),
    ${eventsCtes(events, go)}
    SELECT ${columnsOf(Prisma.ChainTransferScalarFieldEnum)} FROM new_transfer`));
  if (rows.length === 0) return [];
  deps.events.committed(events.map((e) => e.type));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return planned.map((p) => byId.get(p.transfer.id)!);
}
