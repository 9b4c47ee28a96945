// Applies what chains report to invoices: each report, expiry and merchant decision is one transaction that
// locks the invoice, records the transfer, moves the status (state-machine.ts), books the ledger and writes
// the events. Replaying a report changes nothing.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { Prisma, type ChainTransfer, type Invoice, type PaymentAddress } from '../../generated/prisma/client.ts';
import type { ChainRegistry, TransferReport } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import { Money, toMoney } from '../domain/money.ts';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import { recordEvent, recordInvoiceEvent } from '../events/outbox.ts';
import { decide, type Trigger } from '../invoices/state-machine.ts';
import type { InvoiceStatus } from '../invoices/status.ts';
import { ACCOUNTS, postJournal } from '../ledger/ledger.ts';
import { toleranceFrom } from './underpayment.ts';

type Tx = Prisma.TransactionClient;

export interface PaymentDeps {
  db: Db;
  clock: Clock;
  chains: ChainRegistry;
  /** Called after a transaction that wrote events commits (wakes the webhook worker). */
  notify?: () => void;
}

/** Serialises everything that touches one invoice (reports, expiry, decisions) across connections. */
export async function lockInvoice(tx: Tx, invoiceId: string): Promise<Invoice> {
  // Lock and read in one round trip (raw rows carry the same types as findUnique's: Decimal, Date).
  const [invoice] = await tx.$queryRaw<Invoice[]>`SELECT * FROM "Invoice" WHERE "id" = ${invoiceId} FOR UPDATE`;
  if (!invoice) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  return invoice;
}

const requiredConfirmations = (asset: string) => (isPaymentCurrency(asset) ? PAYMENT_CURRENCY_INFO[asset].confirmations : 1);

export async function applyTransferReport(deps: PaymentDeps, report: TransferReport): Promise<ChainTransfer> {
  // The address and its company's time in one round trip; the assets of the network let it use the
  // (asset, address, tag) index.
  const assets = PAYMENT_CURRENCIES.filter((c) => PAYMENT_CURRENCY_INFO[c].network === report.network);
  const [address] = assets.length === 0 ? [] : await deps.db.$queryRaw<(PaymentAddress & { now: Date })[]>`
    SELECT a.*, ${deps.clock.companyNowSql('a."companyId"')} AS "now" FROM "PaymentAddress" a
    WHERE a."asset" IN (${Prisma.join(assets)}) AND a."address" = ${report.to}
      AND ${report.tag === null ? Prisma.sql`a."tag" IS NULL` : Prisma.sql`a."tag" = ${report.tag}`}
    LIMIT 1`;
  if (!address?.invoiceId) throw new NotFoundError(`No payment address ${report.to}${report.tag ? ` (tag ${report.tag})` : ''} on ${report.network}`);
  const invoiceId = address.invoiceId;
  const now = address.now;

  const applied = await transactionWithRetry(deps.db, async (tx) => {
    let invoice = await lockInvoice(tx, invoiceId);
    // A report after the window closed: close first (the sweeper may not have run yet), then it is late.
    if ((invoice.status === 'pending' || invoice.status === 'processing') && invoice.expiredAt && invoice.expiredAt <= now) {
      invoice = await reevaluate(tx, invoice, 'expire', now);
    }

    const where = { network_txHash_outputIndex: { network: report.network, txHash: report.txHash, outputIndex: report.outputIndex } };
    // A new output (the usual report) is recorded in one round trip; a known one is read and compared below.
    let transfer: ChainTransfer | undefined;
    let becameConfirmed = false;
    if (!report.dropped) {
      const confirmed = report.confirmations >= requiredConfirmations(report.asset);
      const role = report.asset !== address.asset ? 'wrong_asset' : invoice.status === 'closed' || invoice.status === 'refunded' ? 'late' : 'payment';
      [transfer] = await tx.$queryRaw<ChainTransfer[]>`
        INSERT INTO "ChainTransfer" ("id", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
          "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
        VALUES (${randomUUID()}::uuid, ${report.network}, ${report.asset}, ${report.txHash}, ${report.outputIndex}::int, ${report.from}::text,
          ${report.to}, ${report.tag}::text, ${report.amount.toFixed()}::numeric, ${report.confirmations}::int, ${report.blockNumber}::bigint,
          ${confirmed ? 'confirmed' : 'seen'}::"TransferState", ${role}::"TransferRole", ${invoice.companyId}::uuid, ${invoiceId}, ${address.id},
          ${now}::timestamptz, ${confirmed ? now : null}::timestamptz)
        ON CONFLICT ("network", "txHash", "outputIndex") DO NOTHING
        RETURNING *`;
      becameConfirmed = transfer !== undefined && confirmed;
    }
    const existing = transfer ? null : await tx.chainTransfer.findUnique({ where });
    if (existing) {
      // One transaction output pays one address: a report naming another address (or merchant) is not a repeat
      // of the one recorded, whoever sends it, and never changes it.
      if (existing.addressId !== address.id || existing.asset !== report.asset || !toMoney(existing.amount).eq(report.amount)) {
        throw new ConflictError('CONFLICT', `Transaction output ${report.txHash}:${report.outputIndex} was already reported with another address, asset or amount`);
      }
      if (existing.state === 'dropped') return existing;
      if (report.dropped) {
        if (existing.state === 'confirmed') throw new ConflictError('CONFLICT', `Transfer ${existing.id} is already final and cannot drop`);
        transfer = await tx.chainTransfer.update({ where: { id: existing.id }, data: { state: 'dropped', droppedAt: now } });
      } else if (report.confirmations > existing.confirmations) {
        becameConfirmed = existing.state === 'seen' && report.confirmations >= requiredConfirmations(existing.asset);
        transfer = await tx.chainTransfer.update({
          where: { id: existing.id },
          data: {
            confirmations: report.confirmations,
            blockNumber: report.blockNumber ?? existing.blockNumber,
            ...(becameConfirmed ? { state: 'confirmed', confirmedAt: now } : {}),
          },
        });
      } else {
        return existing; // a duplicate report
      }
    } else if (!transfer) {
      throw new NotFoundError(`No transfer ${report.txHash}:${report.outputIndex} to drop`);
    }

    if (becameConfirmed) await creditTransfer(tx, transfer);
    if (transfer.role !== 'wrong_asset') invoice = await reevaluate(tx, invoice, 'payment', now);
    const notice = !becameConfirmed
      ? null
      : transfer.role === 'wrong_asset'
        ? (['invoice.unexpected_asset', 'Payment received in an asset or network this invoice does not expect'] as const)
        : invoice.status === 'closed' || invoice.status === 'refunded'
          ? (['invoice.late_payment', 'Payment received after the invoice closed'] as const)
          : null;
    if (notice) {
      const [type, message] = notice;
      await recordEvent(tx, invoice.companyId, invoiceId, type, {
        invoiceId,
        status: invoice.status,
        message,
        asset: transfer.asset,
        amount: toMoney(transfer.amount).toFixed(),
        txHash: transfer.txHash,
      });
    }
    return transfer;
  });
  deps.notify?.();
  return applied;
}

/** Books a transfer that just became final: the merchant's money (or suspense for an unexpected asset). */
async function creditTransfer(tx: Tx, transfer: ChainTransfer): Promise<void> {
  const amount = toMoney(transfer.amount);
  const expected = transfer.role !== 'wrong_asset';
  await postJournal(tx, {
    companyId: transfer.companyId,
    asset: transfer.asset,
    kind: !expected ? 'unexpected_asset' : transfer.role === 'late' ? 'late_payment' : 'payment',
    postings: [
      { account: ACCOUNTS.chainExternal, amount: amount.neg() },
      { account: expected ? ACCOUNTS.merchantAvailable : ACCOUNTS.merchantSuspense, amount },
    ],
    invoiceId: transfer.invoiceId,
    transferId: transfer.id,
  });
}

interface Facts {
  confirmedTotal: Decimal;
  unconfirmedCount: number;
  expected: Decimal;
  tolerance: Decimal;
}

async function gatherFacts(tx: Tx, invoice: Invoice): Promise<Facts> {
  const expected = invoice.paymentAmount === null ? new Money(0) : toMoney(invoice.paymentAmount);
  const currency = invoice.paymentCurrency ?? '';
  // The transfer totals and the merchant's underpayment limit (toleranceFor's row) in one round trip.
  const [row] = await tx.$queryRaw<{ confirmed: Prisma.Decimal; unconfirmed: number; fixed: Prisma.Decimal | null; percent: Prisma.Decimal | null; limited: boolean }[]>`
    WITH t AS (
      SELECT COALESCE(SUM("amount") FILTER (WHERE "state" = 'confirmed'), 0) AS confirmed,
        COUNT(*) FILTER (WHERE "state" = 'seen' AND "role" = 'payment')::int AS unconfirmed
      FROM "ChainTransfer" WHERE "invoiceId" = ${invoice.id} AND "role" IN ('payment', 'late') AND "state" IN ('seen', 'confirmed')
    )
    SELECT t.confirmed, t.unconfirmed, l."fixed", l."percent", l."asset" IS NOT NULL AS limited
    FROM t LEFT JOIN "UnderpaymentLimit" l
      ON l."companyId" = ${invoice.companyId}::uuid AND l."asset" = ${isPaymentCurrency(currency) ? PAYMENT_CURRENCY_INFO[currency].asset : null}::text`;
  const tolerance = isPaymentCurrency(currency) ? toleranceFrom(row!.limited ? { fixed: row!.fixed, percent: row!.percent } : null, expected) : new Money(0);
  return { confirmedTotal: toMoney(row!.confirmed), unconfirmedCount: Number(row!.unconfirmed), expected, tolerance };
}

/**
 * Recomputes the payment totals and applies the state machine's decision for `trigger`: status, events
 * and, on `done`, the fee. Throws a conflict when the machine rejects a merchant decision.
 */
export async function reevaluate(tx: Tx, invoice: Invoice, trigger: Trigger, now: Date): Promise<Invoice> {
  const facts = await gatherFacts(tx, invoice);
  const decision = decide({ status: invoice.status as InvoiceStatus, ...facts }, trigger);
  if (decision.kind === 'reject') throw new ConflictError('CONFLICT', `Invoice ${invoice.id}: ${decision.reason}`);
  const overpaid = Money.max(facts.confirmedTotal.minus(facts.expected), 0);
  const data: Prisma.InvoiceUpdateInput = { paidAmount: facts.confirmedTotal.toFixed(), overpaidAmount: overpaid.toFixed() };
  if (decision.kind === 'move') {
    data.status = decision.to;
    if (decision.to === 'done') {
      if (trigger === 'accept') data.acceptedAt = now;
      // The fee was quoted at proceed; a short payment the merchant accepted pays at most what arrived.
      const fee = Money.min(toMoney(invoice.invoiceFee ?? 0), facts.confirmedTotal);
      data.feeCharged = fee.toFixed();
      data.settledAt = now;
      await postJournal(tx, {
        companyId: invoice.companyId,
        asset: invoice.paymentCurrency!,
        kind: 'fee',
        postings: [
          { account: ACCOUNTS.merchantAvailable, amount: fee.neg() },
          { account: ACCOUNTS.platformFees, amount: fee },
        ],
        invoiceId: invoice.id,
      });
    }
    if (decision.to === 'wrong' || decision.to === 'closed' || decision.to === 'refunded') data.settledAt = now;
  }
  const updated = await tx.invoice.update({ where: { id: invoice.id }, data });
  if (decision.kind === 'move') await recordInvoiceEvent(tx, invoice.companyId, invoice.id, decision.to);
  return updated;
}

/** Closes (or settles as wrong) every invoice whose payment window has passed; returns how many moved. */
export async function sweepExpired(deps: PaymentDeps, options: { companyId?: string; batch?: number } = {}): Promise<number> {
  const batch = options.batch ?? 200;
  const onlyCompany = options.companyId ? Prisma.sql`AND i."companyId" = ${options.companyId}::uuid` : Prisma.empty;
  let moved = 0;
  for (;;) {
    // Due on each company's own clock (its sandbox test clock's offset; none in production).
    const due = await deps.db.$queryRaw<{ id: string; companyId: string }[]>`
      SELECT i."id", i."companyId"::text AS "companyId" FROM "Invoice" i
      WHERE i."status" IN ('pending', 'processing') ${onlyCompany}
        AND i."expiredAt" <= ${deps.clock.companyNowSql('i."companyId"')}
      ORDER BY i."expiredAt" LIMIT ${batch}`;
    for (const { id, companyId } of due) {
      const now = await deps.clock.now(companyId);
      const changed = await transactionWithRetry(deps.db, async (tx) => {
        const invoice = await lockInvoice(tx, id);
        // Re-checked under the lock: a report or another sweeper may have moved it meanwhile.
        if ((invoice.status !== 'pending' && invoice.status !== 'processing') || !invoice.expiredAt || invoice.expiredAt > now) return false;
        const after = await reevaluate(tx, invoice, 'expire', now);
        return after.status !== invoice.status;
      });
      if (changed) moved++;
    }
    if (moved > 0) deps.notify?.();
    if (due.length < batch) return moved;
  }
}
