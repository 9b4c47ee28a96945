// The invoice lifecycle in one place. Every move (proceed, payment, expiry, the merchant's accept or refund) is
// one transaction that locks the invoice, gathers the facts, asks the state machine (state-machine.ts) and
// writes the new status, the ledger and the event together.
import type { unchargedInvoiceFees } from './uncharged-fees.ts';
import { skipThisJournal } from '../core/plant.ts';
import { recordAudit } from '../core/audit.ts';
import type { Actor } from '../core/scopes.ts';
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { Prisma, type Invoice, type Refund } from '../../generated/prisma/client.ts';
import type { CreditHooks } from '../core/credits.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import type { Company } from '../core/auth.ts';
import { commitWithEvents, eventCtes, noteEvents, type EventDeps, type NewEvent } from '../core/events.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, isInvoiceCurrency, isPaymentCurrency, type PaymentCurrency } from '../domain/assets.ts';
import { requireOffered } from '../chains/offered.ts';
import { MAX_AMOUNT, MAX_BALANCE, Money, toMoney } from '../domain/money.ts';
import { AppError, ConflictError, LimitExceededError, NotFoundError, RateUnavailableError, ValidationError } from '../errors/app-error.ts';
import { ACCOUNTS, postJournal, type Journal } from '../ledger/ledger.ts';
import type { FeeTable } from '../pricing/fees.ts';
import type { RateBook } from '../pricing/rates.ts';
import type { Logger } from '../logger.ts';
import { acceptsCurrency, expiryFor, quotePayment, type ProceedInvoiceInput, type RefundInvoiceInput } from './rules.ts';
import { decide, type Trigger } from './state-machine.ts';
import { invoiceStatusEvent, type InvoiceStatus, type Settlement } from './status.ts';
import { toleranceFrom } from './underpayment.ts';
import { dispatchRefund } from './refunds.ts';
import { getInvoiceRecord, publicInvoiceWhere, type InvoiceRecord } from './queries.ts';

type Tx = Prisma.TransactionClient;

export interface LifecycleDeps extends EventDeps {
  clock: Clock;
  chains: ChainRegistry;
  /** Run after each credit to the merchant's available money, in its transaction. */
  credits: CreditHooks;
  logger?: Logger;
}

export interface InvoiceDeps extends LifecycleDeps {
  rates: RateBook;
  fees: FeeTable;
  /** How long an Idempotency-Key answers with its first response. */
  idempotencyTtlMs: number;
  /** {pay_url}: the checkout page base. */
  payUrl: string;
  /** The fees invoices will still charge in an asset (uncharged-fees.ts), for features that debit the merchant's money. */
  unchargedFees: typeof unchargedInvoiceFees;
}

/** Serialises everything that touches one invoice (reports, expiry, decisions) across connections. */
export async function lockInvoice(tx: Tx, invoiceId: string): Promise<Invoice> {
  const [invoice] = await tx.$queryRaw<Invoice[]>`SELECT * FROM "Invoice" WHERE "id" = ${invoiceId} FOR UPDATE`;
  if (!invoice) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  return invoice;
}

export interface Facts {
  confirmedTotal: Decimal;
  unconfirmedCount: number;
  expected: Decimal;
  tolerance: Decimal;
}

/** What gatherFacts reads in one row: the transfer totals and the merchant's underpayment limit. */
export interface FactsRow {
  confirmed: Prisma.Decimal;
  unconfirmed: number;
  fixed: Prisma.Decimal | null;
  percent: Prisma.Decimal | null;
  limited: boolean;
}

/** An invoice's transfer totals (`confirmed`, `unconfirmed`) as a query, for a statement that checks them. */
export const transferTotalsSql = (invoiceId: Prisma.Sql): Prisma.Sql => Prisma.sql`
  SELECT COALESCE(SUM("amount") FILTER (WHERE "state" = 'confirmed'), 0) AS confirmed,
    COUNT(*) FILTER (WHERE "state" = 'seen' AND "role" = 'payment')::int AS unconfirmed
  FROM "ChainTransfer" WHERE "invoiceId" = ${invoiceId} AND "role" IN ('payment', 'late') AND "state" IN ('seen', 'confirmed')`;

/** The query of a FactsRow, over SQL expressions of the invoice's id and company (a join may name its columns). */
export function factsRowSql(invoiceId: Prisma.Sql, companyId: Prisma.Sql, paymentCurrency: string | null | Prisma.Sql): Prisma.Sql {
  const currency = paymentCurrency ?? '';
  const asset =
    typeof currency !== 'string'
      ? assetOfCurrencySql(currency)
      : Prisma.sql`${isPaymentCurrency(currency) ? PAYMENT_CURRENCY_INFO[currency].asset : null}::text`;
  return Prisma.sql`
    SELECT t.confirmed, t.unconfirmed, l."fixed", l."percent", l."asset" IS NOT NULL AS limited
    FROM (${transferTotalsSql(invoiceId)}) t LEFT JOIN "UnderpaymentLimit" l
      ON l."companyId" = ${companyId} AND l."asset" = ${asset}`;
}

/** The asset of a payment currency given as an SQL expression (the currencies are the code's own names). */
const assetOfCurrencySql = (currency: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`(CASE ${currency} ${Prisma.raw(PAYMENT_CURRENCIES.map((c) => `WHEN '${c}' THEN '${PAYMENT_CURRENCY_INFO[c].asset}'`).join(' '))} END)`;

/** The facts of `invoice` from its FactsRow (none needed before the invoice has an address). */
export function factsFrom(invoice: Pick<Invoice, 'status' | 'paymentAmount' | 'paymentCurrency'>, row: FactsRow | null): Facts {
  const expected = invoice.paymentAmount === null ? new Money(0) : toMoney(invoice.paymentAmount);
  // Nothing can have been paid before the invoice has an address.
  if (invoice.status === 'created' || !row) return { confirmedTotal: new Money(0), unconfirmedCount: 0, expected, tolerance: new Money(0) };
  const currency = invoice.paymentCurrency ?? '';
  const tolerance = isPaymentCurrency(currency) ? toleranceFrom(row.limited ? { fixed: row.fixed, percent: row.percent } : null, expected) : new Money(0);
  return { confirmedTotal: toMoney(row.confirmed), unconfirmedCount: Number(row.unconfirmed), expected, tolerance };
}

async function gatherFacts(tx: Tx, invoice: Invoice): Promise<Facts> {
  if (invoice.status === 'created') return factsFrom(invoice, null);
  // The transfer totals and the merchant's underpayment limit in one round trip.
  const [row] = await tx.$queryRaw<FactsRow[]>(factsRowSql(Prisma.sql`${invoice.id}`, Prisma.sql`${invoice.companyId}::uuid`, invoice.paymentCurrency));
  return factsFrom(invoice, row!);
}

/** The columns a lifecycle move writes, with their SQL types. */
const CHANGE_COLUMNS = {
  status: '"InvoiceStatus"',
  paidAmount: 'numeric',
  overpaidAmount: 'numeric',
  feeCharged: 'numeric',
  rate: 'numeric',
  rateDetails: 'jsonb',
  invoiceFee: 'numeric',
  paymentAmount: 'numeric',
  acceptedAt: 'timestamptz',
  settlement: 'text',
  settledAt: 'timestamptz',
  expiredAt: 'timestamptz',
  proceededAt: 'timestamptz',
  clientEmail: 'text',
  paymentCurrency: 'text',
  lang: 'text',
} as const;

export type InvoiceChange = Partial<Record<keyof typeof CHANGE_COLUMNS, string | Date | null>>;

/** The SET list of a change (with "updatedAt"). */
export function changeSets(change: InvoiceChange): Prisma.Sql {
  const sets = Object.entries(change).map(
    ([column, value]) => Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}::${Prisma.raw(CHANGE_COLUMNS[column as keyof typeof CHANGE_COLUMNS])}`,
  );
  return Prisma.join([...sets, Prisma.sql`"updatedAt" = now()`]);
}

/** The invoice's new state and, when it moved, its event: one statement. */
async function writeChange(tx: Tx, invoiceId: string, change: InvoiceChange, event: NewEvent | null): Promise<Invoice> {
  const [updated] = await tx.$queryRaw<Invoice[]>`
    WITH changed AS (UPDATE "Invoice" SET ${changeSets(change)} WHERE "id" = ${invoiceId} RETURNING *)
    ${event ? Prisma.sql`, ${eventCtes(event)}` : Prisma.empty}
    SELECT * FROM changed`;
  if (event) noteEvents(tx, [event.type]);
  return updated!;
}

/** What planMove reads of the invoice. */
export type MoveSubject = Pick<Invoice, 'id' | 'companyId' | 'status' | 'invoiceFee' | 'paymentCurrency' | 'orderId' | 'metadata' | 'settlement'>;

/** What a lifecycle move writes: the invoice's columns, its status event when it moved, the fee journal on `done`. */
export interface Move {
  change: InvoiceChange;
  /** The status after the move (the same when it stayed). */
  status: InvoiceStatus;
  event: NewEvent | null;
  fee: Journal | null;
}

/**
 * The state machine's decision for `trigger` on these facts, as what to write (pure). Throws a conflict when the
 * machine rejects, and LimitExceededError when the payments would total more than the limit.
 */
export function planMove(invoice: MoveSubject, facts: Facts, trigger: Trigger, now: Date, fill: InvoiceChange = {}): Move {
  const decision = decide({ status: invoice.status as InvoiceStatus, ...facts }, trigger);
  if (decision.kind === 'reject') {
    throw new ConflictError(trigger === 'proceed' ? 'INVOICE_NOT_PROCEEDABLE' : 'CONFLICT', `Invoice ${invoice.id}: ${decision.reason}`);
  }
  // Only a payment raises the total, and the payment's credit is in this transaction: refused, it is not booked.
  if (facts.confirmedTotal.gt(MAX_BALANCE)) {
    throw new LimitExceededError(`The payments to invoice ${invoice.id} would total more than the limit of ${MAX_BALANCE.toFixed()} (docs/money.md, "Limits")`);
  }
  const overpaid = Money.max(facts.confirmedTotal.minus(facts.expected), 0);
  const data: InvoiceChange = { ...fill, paidAmount: facts.confirmedTotal.toFixed(), overpaidAmount: overpaid.toFixed() };
  let fee: Journal | null = null;
  if (decision.kind === 'move') {
    data.status = decision.to;
    if (decision.to === 'done') {
      if (trigger === 'accept') {
        data.acceptedAt = now;
        data.settlement = invoice.status === 'wrong' ? 'accepted_short' : 'accepted_late';
      }
      // The fee was quoted at proceed; a short payment the merchant accepted pays at most what arrived.
      const charged = Money.min(toMoney(invoice.invoiceFee ?? 0), facts.confirmedTotal);
      data.feeCharged = charged.toFixed();
      data.settledAt = now;
      // The soak's planted bug (docs/soak.md): a fee journal left out now and then, for ledger:verify to find.
      if (!skipThisJournal()) fee = {
        companyId: invoice.companyId,
        asset: invoice.paymentCurrency!,
        kind: 'fee',
        postings: [
          { account: ACCOUNTS.merchantAvailable, amount: charged.neg() },
          { account: ACCOUNTS.platformFees, amount: charged },
        ],
        invoiceId: invoice.id,
      };
    }
    if (decision.to === 'wrong' || decision.to === 'closed' || decision.to === 'refunded') data.settledAt = now;
    if (decision.to === 'refunded') data.settlement = 'refunded';
  }
  const extras = { orderId: invoice.orderId, metadata: invoice.metadata, settlement: (data.settlement ?? invoice.settlement) as Settlement | null };
  return {
    change: data,
    status: decision.kind === 'move' ? decision.to : (invoice.status as InvoiceStatus),
    event: decision.kind === 'move' ? invoiceStatusEvent(invoice.companyId, invoice.id, decision.to, extras) : null,
    fee,
  };
}

/**
 * Recomputes the payment totals and applies the state machine's decision for `trigger`: status, events and, on
 * `done`, the fee. `fill` is written with the move (proceed's quote). Throws a conflict when the machine rejects.
 */
export async function reevaluate(tx: Tx, invoice: Invoice, trigger: Trigger, now: Date, fill: InvoiceChange = {}): Promise<Invoice> {
  const move = planMove(invoice, await gatherFacts(tx, invoice), trigger, now, fill);
  if (move.fee) await postJournal(tx, move.fee);
  return writeChange(tx, invoice.id, move.change, move.event);
}

/** A report that comes after the payment window closed: close first (the sweeper may not have run yet). */
export async function closeIfExpired(tx: Tx, invoice: Invoice, now: Date): Promise<Invoice> {
  const open = invoice.status === 'pending' || invoice.status === 'processing';
  return open && invoice.expiredAt && invoice.expiredAt <= now ? reevaluate(tx, invoice, 'expire', now) : invoice;
}

/** The caller's invoice, or 404 (another merchant's invoice does not exist for it). */
async function ownInvoice(deps: LifecycleDeps, company: Company, invoiceId: string) {
  const where = publicInvoiceWhere(invoiceId);
  const invoice = where ? await deps.db.invoice.findUnique({ where, select: { companyId: true, paymentCurrency: true } }) : null;
  if (!invoice || invoice.companyId !== company.id) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  return invoice;
}

/**
 * Fills a `created` invoice with the client's e-mail and payment currency, assigns a payment address and
 * quotes the amount. Repeating the same call is answered with the same invoice; any other call on an
 * invoice that is no longer `created` is a conflict.
 */
export async function proceedInvoice(
  deps: InvoiceDeps,
  invoiceId: string,
  input: ProceedInvoiceInput,
  actingCompany: Company | null,
): Promise<InvoiceRecord> {
  const current = await getInvoiceRecord(deps.db, invoiceId);
  if (actingCompany && actingCompany.id !== current.companyId) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  // The merchant's fixed currency wins over the client's choice.
  const paymentCurrency = (current.fixedPaymentCurrency ?? input.paymentCurrency) as PaymentCurrency | null;
  if (!paymentCurrency) throw new ValidationError([{ path: 'paymentCurrency', message: 'is required: the merchant fixed no payment currency' }]);
  if (!isPaymentCurrency(paymentCurrency)) throw new Error(`stored payment currency ${paymentCurrency} is unknown`);
  if (!acceptsCurrency(current.company.acceptedAssets, paymentCurrency)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `this merchant does not accept ${paymentCurrency}` }]);
  }
  const { mode } = current.company;
  requireOffered(deps.chains, mode, paymentCurrency, 'paymentCurrency');
  if (current.status !== 'created') return sameFillOrConflict(current, input.clientEmail, paymentCurrency);

  if (!isInvoiceCurrency(current.invoiceCurrency)) throw new Error(`stored invoice currency ${current.invoiceCurrency} is unknown`);
  // From memory (the refresher fetches in the background); never a stale or unchecked rate (docs/rates.md).
  const priced = deps.rates.quote(mode, current.invoiceCurrency, paymentCurrency);
  if (!priced.ok) {
    const side = priced.currency === PAYMENT_CURRENCY_INFO[paymentCurrency].asset ? priced.reason : `no good ${priced.currency} price: ${priced.reason}`;
    throw new RateUnavailableError(paymentCurrency, side);
  }
  const quote = quotePayment({
    total: toMoney(current.total),
    rate: priced.quote.rate,
    fee: deps.fees[paymentCurrency],
    paymentCurrency,
    isMerchantPaysFee: current.isMerchantPaysFee,
  });
  if (quote.paymentAmount.gt(MAX_AMOUNT)) {
    throw new LimitExceededError(
      `the amount to pay, ${quote.paymentAmount.toFixed()} ${paymentCurrency}, is above the limit of ${MAX_AMOUNT.toFixed()} per amount (docs/money.md, "Limits")`,
      'paymentCurrency',
    );
  }
  const allocated = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[paymentCurrency].network, mode).allocateAddress({ companyId: current.companyId, ownerId: invoiceId, paymentCurrency });
  const now = await deps.clock.now(current.companyId);
  const filled = await commitWithEvents(deps, async (tx) => {
    const invoice = await lockInvoice(tx, invoiceId);
    // Of two racing fills exactly one finds the invoice still `created`.
    if (invoice.status !== 'created') return false;
    await tx.paymentAddress.create({
      data: { id: randomUUID(), companyId: current.companyId, invoiceId, asset: paymentCurrency, address: allocated.address, tag: allocated.tag },
    });
    await reevaluate(tx, invoice, 'proceed', now, {
      clientEmail: input.clientEmail,
      paymentCurrency,
      lang: input.lang,
      rate: quote.rate.toFixed(),
      rateDetails: JSON.stringify(priced.quote.details),
      invoiceFee: quote.invoiceFee.toFixed(),
      paymentAmount: quote.paymentAmount.toFixed(),
      expiredAt: expiryFor(paymentCurrency, now),
      proceededAt: now,
    });
    return true;
  });
  const after = await getInvoiceRecord(deps.db, invoiceId);
  return filled ? after : sameFillOrConflict(after, input.clientEmail, paymentCurrency);
}

function sameFillOrConflict(invoice: InvoiceRecord, clientEmail: string, paymentCurrency: string): InvoiceRecord {
  const sameFill =
    invoice.status !== 'created' &&
    invoice.clientEmail?.toLowerCase() === clientEmail.toLowerCase() &&
    invoice.paymentCurrency === paymentCurrency;
  if (sameFill) return invoice;
  throw new ConflictError(
    'INVOICE_NOT_PROCEEDABLE',
    `Invoice ${invoice.id} has status ${invoice.status}; only an invoice in status created can be filled`,
  );
}

/** wrong (or closed with a late payment) -> done: the merchant keeps what arrived and treats it as paid. */
export async function acceptInvoice(deps: LifecycleDeps, company: Company, actor: Actor, invoiceId: string): Promise<void> {
  await ownInvoice(deps, company, invoiceId);
  const now = await deps.clock.now(company.id);
  await commitWithEvents(deps, async (tx) => {
    const accepted = await reevaluate(tx, await lockInvoice(tx, invoiceId), 'accept', now);
    await recordAudit(tx, company.id, actor, 'invoice.accepted', { invoiceId });
    // What arrived is the merchant's for good now (no refund any more): the credit hooks act on it (an autoswap).
    if (accepted.status === 'done' && accepted.paymentCurrency) {
      const net = toMoney(accepted.paidAmount).minus(toMoney(accepted.feeCharged ?? 0));
      const address = await tx.paymentAddress.findUnique({ where: { invoiceId }, select: { id: true } });
      if (net.gt(0)) await deps.credits.credited(tx, { companyId: accepted.companyId, asset: accepted.paymentCurrency, amount: net, invoiceId, addressId: address?.id ?? null });
    }
  });
}

/**
 * wrong (or closed with a late payment) -> refunded: everything that arrived goes back to the client's address,
 * less the network fee of the send. Booked and queued in one transaction, then handed to the chain adapter.
 */
export async function refundInvoice(deps: LifecycleDeps, company: Company, actor: Actor, invoiceId: string, input: RefundInvoiceInput): Promise<Refund> {
  const { paymentCurrency } = await ownInvoice(deps, company, invoiceId);
  if (!paymentCurrency || !isPaymentCurrency(paymentCurrency)) throw new ConflictError('CONFLICT', `Invoice ${invoiceId} has received no payment`);
  const info = PAYMENT_CURRENCY_INFO[paymentCurrency];
  if (!deps.chains.forNetwork(info.network, company.mode).isValidAddress(input.address)) {
    throw new ValidationError([{ path: 'address', message: `is not a valid ${info.network} address` }]);
  }
  if (info.tagged && !input.tag) throw new ValidationError([{ path: 'tag', message: `is required for ${paymentCurrency}` }]);
  if (!info.tagged && input.tag) throw new ValidationError([{ path: 'tag', message: `must be empty: ${paymentCurrency} has no tags` }]);
  const refusal = deps.chains.forNetwork(info.network, company.mode).sendRefusal(paymentCurrency);
  if (refusal) throw new AppError('SERVICE_UNAVAILABLE', `Refunds in ${paymentCurrency} cannot be sent: ${refusal}`);

  const now = await deps.clock.now(company.id);
  const refund = await commitWithEvents(deps, async (tx) => {
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
    await recordAudit(tx, company.id, actor, 'invoice.refunded', {
      invoiceId,
      refundId: row.id,
      asset: paymentCurrency,
      amount: amount.toFixed(),
      to: input.address,
      tag: input.tag ?? null,
    });
    return row;
  });
  return (await dispatchRefund(deps, refund, company.mode)) ?? refund;
}

/** Closes (or settles as wrong) every invoice whose payment window has passed; returns how many moved. */
export async function sweepExpired(deps: LifecycleDeps, options: { companyId?: string; batch?: number } = {}): Promise<number> {
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
      // Re-checked under the lock: a report or another sweeper may have moved it meanwhile.
      const changed = await commitWithEvents(deps, async (tx) => {
        const invoice = await lockInvoice(tx, id);
        const after = await closeIfExpired(tx, invoice, now);
        return after.status !== invoice.status;
      });
      if (changed) moved++;
    }
    if (due.length < batch) return moved;
  }
}
