// Applies what chains report to invoices: each report is one transaction that locks the invoice, records the
// transfer, books the ledger and lets the invoice lifecycle move the status and write the events; the common case
// is one statement (booking.ts, docs/payments.md "One statement"), several reports' in one (batch.ts). Replaying a report changes nothing.
import { randomUUID } from 'node:crypto';
import { Prisma, type ChainTransfer, type PaymentAddress } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import { commitWithEvents, recordEvent } from '../core/events.ts';
import type { Mode } from '../domain/modes.ts';
import { fitsColumn, toMoney } from '../domain/money.ts';
import { ConflictError, LimitExceededError, NotFoundError } from '../errors/app-error.ts';
import { closeIfExpired, lockInvoice, reevaluate, type LifecycleDeps } from '../invoices/lifecycle.ts';
import { postJournal } from '../ledger/ledger.ts';
import { bookAlone, type Booker } from './batch.ts';
import { creditJournal, insertTransfersSql, planBooking, reportEvents, roleOf, snapshotOf } from './booking.ts';
import { findPayees, type Payee } from './payees.ts';
import { applyDepositReport, freezeOverLimit } from '../deposits/processor.ts';
import type { DepositDeps } from '../deposits/service.ts';

export interface PaymentDeps extends LifecycleDeps {
  /** Reports for static addresses go to the deposits feature. */
  deposits: DepositDeps;
  /** Writes a one-statement booking (several together: batch.ts); by default each in its own statement. */
  book?: Booker;
}

/**
 * `mode`: the chain the report comes from (the sandbox chain: test; a real node: live). Only addresses of that mode's
 * merchants are looked at, so simulated money never reaches a live invoice, nor real money a test one. `payee`: what
 * findPayees found for the report's address in that mode, when the caller already looked it up (the sandbox); else it
 * is looked up here. A payee read before a change to its invoice is safe: the one-statement way writes nothing then.
 */
export async function applyTransferReport(deps: PaymentDeps, report: TransferReport, mode: Mode, payee?: Payee | null): Promise<ChainTransfer> {
  // Not even recordable (no chain we watch moves that much of an asset): logged, and refused, which a watcher passes over.
  if (!fitsColumn(report.amount)) {
    deps.logger?.error({ network: report.network, txHash: report.txHash, outputIndex: report.outputIndex, amount: report.amount.toFixed() }, 'a transfer too large to record was passed over');
    throw new LimitExceededError(`A transfer of ${report.amount.toFixed()} does not fit an amount column (docs/money.md, "Limits")`);
  }
  const address = payee === undefined ? (await findPayees(deps, mode, [{ network: report.network, to: report.to, tag: report.tag, asset: report.asset }]))[0] : payee;
  if (address && !address.invoiceId) {
    const staticAddress = await deps.db.staticAddress.findUnique({ where: { id: address.id } });
    if (staticAddress) return applyDepositReport(deps.deposits, report, { ...address, staticAddress }, mode);
  }
  if (!address?.invoiceId) throw new NotFoundError(`No payment address ${report.to}${report.tag ? ` (tag ${report.tag})` : ''} on ${report.network}`);
  const invoiceId = address.invoiceId;
  const now = address.now;
  try {
    const planned = planBooking(deps, report, mode, address, snapshotOf(address), now);
    const booked = planned && (await (deps.book ? deps.book(planned) : bookAlone(deps, planned)));
    return booked ?? (await bookTransferReport(deps, report, mode, address, invoiceId, now));
  } catch (e) {
    if (!(e instanceof LimitExceededError)) throw e;
    const invoice = await deps.db.invoice.findUniqueOrThrow({ where: { id: invoiceId }, select: { status: true } });
    await freezeOverLimit(deps, report, mode, e, { companyId: address.companyId, addressId: address.id, invoiceId, role: roleOf(report, address, invoice.status), now });
    throw e;
  }
}

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
      const row = { id: randomUUID(), report, mode, role, confirmed, companyId: invoice.companyId, invoiceId, addressId: address.id, now };
      [transfer] = await tx.$queryRaw<ChainTransfer[]>(insertTransfersSql([row], Prisma.sql`TRUE`, 'ignore'));
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

    if (becameConfirmed) await postJournal(tx, creditJournal(transfer));
    const statusBefore = invoice.status;
    if (transfer.role !== 'wrong_asset') invoice = await reevaluate(tx, invoice, 'payment', now);
    const required = deps.chains.requiredConfirmations(transfer.asset, mode);
    for (const event of reportEvents({ transfer, invoiceId, statusBefore, statusAfter: invoice.status, becameConfirmed, requiredConfirmations: required })) {
      await recordEvent(tx, event);
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
