// Applies what chains report to invoices: each report is one transaction that locks the invoice, records the
// transfer, books the ledger and lets the invoice lifecycle move the status and write the events. Replaying a
// report changes nothing.
import { INVOICE_CONFIRMATIONS } from './declarations.ts';
import { randomUUID } from 'node:crypto';
import { Prisma, type ChainTransfer, type PaymentAddress, type TransferRole } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import { commitWithEvents, recordEvent } from '../core/events.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { fitsColumn, toMoney } from '../domain/money.ts';
import { ConflictError, LimitExceededError, NotFoundError } from '../errors/app-error.ts';
import { closeIfExpired, lockInvoice, reevaluate, type LifecycleDeps } from '../invoices/lifecycle.ts';
import { ACCOUNTS, postJournal } from '../ledger/ledger.ts';
import { applyDepositReport, freezeOverLimit } from '../deposits/processor.ts';
import type { DepositDeps } from '../deposits/service.ts';

type Tx = Prisma.TransactionClient;

export interface PaymentDeps extends LifecycleDeps {
  /** Reports for static addresses go to the deposits feature. */
  deposits: DepositDeps;
}

/**
 * `mode`: the chain the report comes from (the sandbox chain: test; a real node: live). Only addresses of that mode's
 * merchants are looked at, so simulated money never reaches a live invoice, nor real money a test one.
 */
export async function applyTransferReport(deps: PaymentDeps, report: TransferReport, mode: Mode): Promise<ChainTransfer> {
  // Not even recordable (no chain we watch moves that much of an asset): logged, and refused, which a watcher passes over.
  if (!fitsColumn(report.amount)) {
    deps.logger?.error({ network: report.network, txHash: report.txHash, outputIndex: report.outputIndex, amount: report.amount.toFixed() }, 'a transfer too large to record was passed over');
    throw new LimitExceededError(`A transfer of ${report.amount.toFixed()} does not fit an amount column (docs/money.md, "Limits")`);
  }
  // The address and its company's time in one round trip; the assets of the network let it use the
  // (asset, address, tag) index.
  const assets = PAYMENT_CURRENCIES.filter((c) => PAYMENT_CURRENCY_INFO[c].network === report.network);
  const [address] = assets.length === 0 ? [] : await deps.db.$queryRaw<(PaymentAddress & { now: Date })[]>`
    SELECT a.*, ${deps.clock.companyNowSql('a."companyId"')} AS "now" FROM "PaymentAddress" a
    JOIN "Company" c ON c."id" = a."companyId" AND c."mode" = ${mode}::"Mode"
    WHERE a."asset" IN (${Prisma.join(assets)}) AND a."address" = ${report.to}
      AND ${report.tag === null ? Prisma.sql`a."tag" IS NULL` : Prisma.sql`a."tag" = ${report.tag}`}
    LIMIT 1`;
  if (address && !address.invoiceId) {
    const staticAddress = await deps.db.staticAddress.findUnique({ where: { id: address.id } });
    if (staticAddress) return applyDepositReport(deps.deposits, report, { ...address, staticAddress }, mode);
  }
  if (!address?.invoiceId) throw new NotFoundError(`No payment address ${report.to}${report.tag ? ` (tag ${report.tag})` : ''} on ${report.network}`);
  const invoiceId = address.invoiceId;
  const now = address.now;
  try {
    return await bookTransferReport(deps, report, mode, address, invoiceId, now);
  } catch (e) {
    if (!(e instanceof LimitExceededError)) throw e;
    const invoice = await deps.db.invoice.findUniqueOrThrow({ where: { id: invoiceId }, select: { status: true } });
    await freezeOverLimit(deps, report, mode, e, { companyId: address.companyId, addressId: address.id, invoiceId, role: roleOf(report, address, invoice.status), now });
    throw e;
  }
}

/** What a transfer to an invoice's address is: the payment, a late one, or one in an asset the invoice does not expect. */
const roleOf = (report: TransferReport, address: PaymentAddress, status: string): TransferRole =>
  report.asset !== address.asset ? 'wrong_asset' : status === 'closed' || status === 'refunded' ? 'late' : 'payment';

/** applyTransferReport's transaction. */
async function bookTransferReport(deps: PaymentDeps, report: TransferReport, mode: Mode, address: PaymentAddress, invoiceId: string, now: Date): Promise<ChainTransfer> {
  return commitWithEvents(deps, async (tx) => {
    // A report after the window closed: close first, then it is late.
    let invoice = await closeIfExpired(tx, await lockInvoice(tx, invoiceId), now);

    const where = { mode_network_txHash_outputIndex: { mode, network: report.network, txHash: report.txHash, outputIndex: report.outputIndex } };
    // A new output (the usual report) is recorded in one round trip; a known one is read and compared below.
    let transfer: ChainTransfer | undefined;
    let becameConfirmed = false;
    if (!report.dropped) {
      const confirmed = report.confirmations >= deps.chains.requiredConfirmations(report.asset, mode);
      const role = roleOf(report, address, invoice.status);
      [transfer] = await tx.$queryRaw<ChainTransfer[]>`
        INSERT INTO "ChainTransfer" ("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
          "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
        VALUES (${randomUUID()}::uuid, ${mode}::"Mode", ${report.network}, ${report.asset}, ${report.txHash}, ${report.outputIndex}::int, ${report.from}::text,
          ${report.to}, ${report.tag}::text, ${report.amount.toFixed()}::numeric, ${report.confirmations}::int, ${report.blockNumber}::bigint,
          ${confirmed ? 'confirmed' : 'seen'}::"TransferState", ${role}::"TransferRole", ${invoice.companyId}::uuid, ${invoiceId}, ${address.id},
          ${now}::timestamptz, ${confirmed ? now : null}::timestamptz)
        ON CONFLICT ("mode", "network", "txHash", "outputIndex") DO NOTHING
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
      // A dropped transfer is gone; a frozen one waits for the operator: neither changes again.
      if (existing.state === 'dropped' || existing.state === 'frozen') return existing;
      if (report.dropped) {
        if (existing.state === 'confirmed') throw new ConflictError('CONFLICT', `Transfer ${existing.id} is already final and cannot drop`);
        transfer = await tx.chainTransfer.update({ where: { id: existing.id }, data: { state: 'dropped', droppedAt: now } });
      } else if (report.confirmations > existing.confirmations) {
        becameConfirmed = existing.state === 'seen' && report.confirmations >= deps.chains.requiredConfirmations(existing.asset, mode);
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
    const statusBefore = invoice.status;
    if (transfer.role !== 'wrong_asset') invoice = await reevaluate(tx, invoice, 'payment', now);
    // Seen or more confirmed, the status unchanged: live subscriptions show the new count (docs/live.md).
    if (transfer.role !== 'wrong_asset' && transfer.state !== 'dropped' && invoice.status === statusBefore) {
      await recordEvent(tx, {
        type: INVOICE_CONFIRMATIONS,
        companyId: invoice.companyId,
        subject: { type: 'invoice', id: invoiceId },
        payload: {
          invoiceId,
          status: invoice.status,
          transferId: transfer.id,
          confirmations: transfer.confirmations,
          requiredConfirmations: deps.chains.requiredConfirmations(transfer.asset, mode),
        },
        deliver: false,
      });
    }
    const notice = !becameConfirmed
      ? null
      : transfer.role === 'wrong_asset'
        ? (['invoice.unexpected_asset', 'Payment received in an asset or network this invoice does not expect'] as const)
        : invoice.status === 'closed' || invoice.status === 'refunded'
          ? (['invoice.late_payment', 'Payment received after the invoice closed'] as const)
          : null;
    if (notice) {
      const [type, message] = notice;
      // Outside the spec's webhook table: recorded for the events feed and the bus, not pushed.
      await recordEvent(tx, {
        type,
        companyId: invoice.companyId,
        subject: { type: 'invoice', id: invoiceId },
        payload: { invoiceId, status: invoice.status, message, asset: transfer.asset, amount: toMoney(transfer.amount).toFixed(), txHash: transfer.txHash },
        deliver: false,
      });
    }
    // After the fee a done invoice takes: hooks see what the merchant really has.
    if (becameConfirmed && transfer.role !== 'wrong_asset') {
      await deps.credits.credited(tx, {
        companyId: transfer.companyId,
        asset: transfer.asset,
        amount: toMoney(transfer.amount),
        invoiceId: transfer.invoiceId,
        transferId: transfer.id,
        addressId: transfer.addressId,
      });
    }
    return transfer;
  });
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
