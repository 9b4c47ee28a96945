// What a transfer report writes, shared by the two ways of booking it (processor.ts): the transfer row, its credit
// journal and its events; and the one-statement way of the common case (a new transfer to an open invoice of a
// merchant without credit-hook rules), which writes all of it, the invoice's move and the fee in ONE statement.
import { randomUUID } from 'node:crypto';
import { Prisma, type ChainTransfer, type Invoice, type PaymentAddress, type TransferRole } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import { queryDirect } from '../db/direct.ts';
import { columnsOf, prepared } from '../db/prepared.ts';
import { eventsCtes, type NewEvent } from '../core/events.ts';
import type { Mode } from '../domain/modes.ts';
import { toMoney } from '../domain/money.ts';
import { LimitExceededError } from '../errors/app-error.ts';
import { changeSets, factsFrom, factsRowSql, planMove, transferTotalsSql, type Facts, type FactsRow, type LifecycleDeps, type MoveSubject } from '../invoices/lifecycle.ts';
import { ACCOUNTS, journalsInStatement, type Journal } from '../ledger/ledger.ts';
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

/** The INSERT of a new transfer where `when` holds; a known output is left alone (RETURNING gives no row). */
export function insertTransferSql(t: NewTransfer, when: Prisma.Sql = Prisma.sql`TRUE`, id: string = randomUUID()): Prisma.Sql {
  const { report, mode, now } = t;
  return Prisma.sql`INSERT INTO "ChainTransfer" ("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
      "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
    SELECT ${id}::uuid, ${mode}::"Mode", ${report.network}, ${report.asset}, ${report.txHash}, ${report.outputIndex}::int, ${report.from}::text,
      ${report.to}, ${report.tag}::text, ${report.amount.toFixed()}::numeric, ${report.confirmations}::int, ${report.blockNumber}::bigint,
      ${t.confirmed ? 'confirmed' : 'seen'}::"TransferState", ${t.role}::"TransferRole", ${t.companyId}::uuid, ${t.invoiceId}, ${t.addressId},
      ${now}::timestamptz, ${t.confirmed ? now : null}::timestamptz
    WHERE ${when}
    ON CONFLICT ("mode", "network", "txHash", "outputIndex") DO NOTHING
    RETURNING ${columnsOf(Prisma.ChainTransferScalarFieldEnum)}`;
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
 * The common case in one statement, outside an interactive transaction: a new transfer in the invoice's asset to an
 * invoice that is not past its window, where no credit hook may act (no autoswap or auto-withdrawal rule). The
 * invoice and its facts were read with the address (no lock); the statement locks the invoice only if it is still
 * that row version, re-checks the transfer totals and the hooks, and writes the transfer, the credit and fee
 * journals, the invoice's move and the events, each only if all of that holds and every balance stays within its
 * limit. Null when it wrote nothing: the caller books the report the general way (which also answers duplicates
 * and limits), in a transaction.
 */
export async function bookInOneStatement(
  deps: LifecycleDeps,
  report: TransferReport,
  mode: Mode,
  address: PaymentAddress,
  snapshot: InvoiceSnapshot | null,
  now: Date,
): Promise<ChainTransfer | null> {
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
  const transferId = randomUUID();
  const transfer = {
    id: transferId, companyId: invoice.companyId, asset: report.asset, amount: new Prisma.Decimal(report.amount.toFixed()), role, invoiceId,
    txHash: report.txHash, confirmations: report.confirmations, state: confirmed ? 'confirmed' : 'seen',
  } as const;
  const inserted = Prisma.sql`EXISTS (SELECT 1 FROM new_transfer)`;
  // A fee beyond this transfer's credit debits earlier money: that takes the exact check (null).
  const journals = journalsInStatement([...(confirmed ? [creditJournal(transfer)] : []), ...(move.fee ? [move.fee] : [])], inserted);
  if (!journals) return null;
  const events = [
    ...(move.event ? [move.event] : []),
    ...reportEvents({ transfer, invoiceId, statusBefore: invoice.status, statusAfter: move.status, becameConfirmed: confirmed, requiredConfirmations: required }),
  ];
  const unchanged = Prisma.sql`(SELECT count(*) FROM locked) = 1
    AND t."confirmed" = ${toMoney(snapshot.facts.confirmed).toFixed()}::numeric AND t."unconfirmed" = ${before.unconfirmedCount}::int
    AND NOT ${confirmed ? deps.credits.mayAct(Prisma.sql`${invoice.companyId}::uuid`, Prisma.sql`${report.asset}::text`) : Prisma.sql`FALSE`}`;
  // RECURSIVE only lets the expressions name later ones (new_transfer, journal_fits); none refers to itself.
  const [row] = await queryDirect<ChainTransfer>(deps.db, prepared(Prisma.sql`
    WITH RECURSIVE locked AS (SELECT "id" FROM "Invoice" WHERE "id" = ${invoiceId} AND xmin = ${version}::xid FOR UPDATE),
    checked AS (SELECT ${unchanged} AS "ok" FROM (${transferTotalsSql(Prisma.sql`${invoiceId}`)}) t),
    ${journals.ctes}
    new_transfer AS (${insertTransferSql({ report, mode, role, confirmed, companyId: invoice.companyId, invoiceId, addressId: address.id, now }, Prisma.sql`(SELECT "ok" FROM checked) AND ${journals.fits}`, transferId)}),
    changed AS (UPDATE "Invoice" SET ${changeSets(move.change)} WHERE "id" = ${invoiceId} AND ${inserted} RETURNING "id")
    ${events.length ? Prisma.sql`, ${eventsCtes(events, inserted)}` : Prisma.empty}
    SELECT * FROM new_transfer`));
  if (!row) return null;
  deps.events.committed(events.map((e) => e.type));
  return row;
}
