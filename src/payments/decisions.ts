// The merchant's decisions on a short (wrong) or late-paid invoice: accept it as paid, or refund the client.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Refund } from '../../generated/prisma/client.ts';
import type { Company } from '../companies/service.ts';
import { PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import { transactionWithRetry } from '../db/client.ts';
import { Money, toMoney } from '../domain/money.ts';
import { AppError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';
import { ACCOUNTS, postJournal } from '../ledger/ledger.ts';
import { parseInput, tag } from '../validation.ts';
import { INVOICE_ID_PATTERN } from '../invoices/ids.ts';
import { lockInvoice, reevaluate, type PaymentDeps } from './processor.ts';

async function ownInvoice(deps: PaymentDeps, company: Company, invoiceId: string) {
  const invoice = INVOICE_ID_PATTERN.test(invoiceId)
    ? await deps.db.invoice.findUnique({ where: { id: invoiceId }, select: { companyId: true, paymentCurrency: true } })
    : null;
  if (!invoice || invoice.companyId !== company.id) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  return invoice;
}

/** wrong (or closed with a late payment) -> done: the merchant keeps what arrived and treats it as paid. */
export async function acceptInvoice(deps: PaymentDeps, company: Company, invoiceId: string): Promise<void> {
  await ownInvoice(deps, company, invoiceId);
  const now = await deps.clock.now(company.id);
  await transactionWithRetry(deps.db, async (tx) => {
    const invoice = await lockInvoice(tx, invoiceId);
    await reevaluate(tx, invoice, 'accept', now);
  });
  deps.notify?.();
}

export const refundInputSchema = z.object({
  address: z.string().trim().min(1, 'must not be empty').max(128),
  // An empty tag is no tag (the spec's withdrawal rule, kept alike here).
  tag: z.union([z.literal(''), tag]).nullish().transform((t) => t || null),
});

/**
 * wrong (or closed with a late payment) -> refunded: everything that arrived goes back to the client's address,
 * less the network fee of the send. Booked and queued in one transaction, then handed to the chain adapter.
 */
export async function refundInvoice(deps: PaymentDeps, company: Company, invoiceId: string, rawInput: unknown, logger?: Logger): Promise<Refund> {
  const input = parseInput(refundInputSchema, rawInput);
  const { paymentCurrency } = await ownInvoice(deps, company, invoiceId);
  if (!paymentCurrency || !isPaymentCurrency(paymentCurrency)) throw new AppError('CONFLICT', `Invoice ${invoiceId} has received no payment`);
  const info = PAYMENT_CURRENCY_INFO[paymentCurrency];
  const adapter = deps.chains.forNetwork(info.network);
  if (!adapter.isValidAddress(input.address)) {
    throw new ValidationError([{ path: 'address', message: `is not a valid ${info.network} address` }]);
  }
  if (info.tagged && !input.tag) throw new ValidationError([{ path: 'tag', message: `is required for ${paymentCurrency}` }]);
  if (!info.tagged && input.tag) throw new ValidationError([{ path: 'tag', message: `must be empty: ${paymentCurrency} has no tags` }]);

  const now = await deps.clock.now(company.id);
  const refund = await transactionWithRetry(deps.db, async (tx) => {
    const invoice = await lockInvoice(tx, invoiceId);
    const received = toMoney(invoice.paidAmount);
    const networkFee = new Money(info.withdrawalFee);
    const amount = received.minus(networkFee);
    await reevaluate(tx, invoice, 'refund', now);
    if (!amount.gt(0)) {
      throw new ValidationError([], `The ${received.toFixed()} ${paymentCurrency} received do not cover the ${networkFee.toFixed()} network fee of a refund`);
    }
    const row = await tx.refund.create({
      data: {
        id: randomUUID(),
        invoiceId,
        companyId: invoice.companyId,
        asset: paymentCurrency,
        amount: amount.toFixed(),
        networkFee: networkFee.toFixed(),
        toAddress: input.address,
        tag: input.tag,
        status: 'queued',
      },
    });
    await postJournal(tx, {
      companyId: invoice.companyId,
      asset: paymentCurrency,
      kind: 'refund',
      postings: [
        { account: ACCOUNTS.merchantAvailable, amount: received.neg() },
        { account: ACCOUNTS.chainExternal, amount },
        { account: ACCOUNTS.networkFees, amount: networkFee },
      ],
      invoiceId,
      refundId: row.id,
    });
    return row;
  });
  deps.notify?.();
  return (await dispatchRefund(deps, refund, logger)) ?? refund;
}

/** Hands a queued refund to its chain adapter; safe to repeat (adapters dedupe by refund id). */
export async function dispatchRefund(deps: PaymentDeps, refund: Refund, logger?: Logger): Promise<Refund | null> {
  if (refund.status !== 'queued' || !isPaymentCurrency(refund.asset)) return null;
  try {
    const { txHash } = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[refund.asset].network).send({
      id: refund.id,
      asset: refund.asset,
      to: refund.toAddress,
      tag: refund.tag,
      amount: toMoney(refund.amount),
    });
    return await deps.db.refund.update({ where: { id: refund.id }, data: { status: 'sent', txHash, sentAt: await deps.clock.now(refund.companyId) } });
  } catch (e) {
    logger?.warn({ err: e, refundId: refund.id }, 'refund send failed; it stays queued and is retried');
    return null;
  }
}

/** Sends refunds left queued by a crash or a failed send. */
export async function dispatchQueuedRefunds(deps: PaymentDeps, logger?: Logger): Promise<number> {
  const queued = await deps.db.refund.findMany({ where: { status: 'queued' }, take: 100, orderBy: { createdAt: 'asc' } });
  let sent = 0;
  for (const r of queued) if (await dispatchRefund(deps, r, logger)) sent++;
  return sent;
}
