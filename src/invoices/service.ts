import { createHash, randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../companies/service.ts';
import type { Db } from '../db/client.ts';
import { PAYMENT_CURRENCY_INFO, isInvoiceCurrency, isPaymentCurrency, type PaymentCurrency } from '../domain/assets.ts';
import { fitsColumn, toMoney } from '../domain/money.ts';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { recordInvoiceEvent } from '../events/outbox.ts';
import { parseInput } from '../validation.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import type { FeeTable } from '../pricing/fees.ts';
import type { RateSource } from '../pricing/rates.ts';
import { INVOICE_ID_PATTERN, newInvoiceId } from './ids.ts';
import { createInvoiceSchema, expiryFor, proceedInvoiceSchema, quotePayment, type CreateInvoiceInput } from './rules.ts';

export interface InvoiceDeps {
  db: Db;
  rates: RateSource;
  fees: FeeTable;
  chains: ChainRegistry;
  clock: Clock;
  /** Called after a transaction that wrote events commits (wakes the webhook worker). */
  notify?: () => void;
}

/** Everything the API surfaces present about an invoice. */
export const invoiceInclude = {
  company: true,
  items: { orderBy: { position: 'asc' } },
  address: true,
  transfers: { orderBy: [{ seenAt: 'asc' }, { id: 'asc' }] },
  refund: true,
} satisfies Prisma.InvoiceInclude;

export type InvoiceRecord = Prisma.InvoiceGetPayload<{ include: typeof invoiceInclude }>;

export interface CreateResult {
  invoice: InvoiceRecord;
  /** True when an Idempotency-Key matched an earlier request and nothing new was created. */
  replayed: boolean;
}

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

function requestFingerprint(input: CreateInvoiceInput): string {
  const canonical = JSON.stringify({
    ...input,
    items: input.items.map((i) => ({ name: i.name, price: i.price.toFixed() })),
    total: input.total.toFixed(),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

function isUniqueViolation(e: unknown): boolean {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002';
}

export async function createInvoice(
  deps: InvoiceDeps,
  company: Company,
  rawInput: unknown,
  idempotencyKey?: string | null,
): Promise<CreateResult> {
  const input = parseInput(createInvoiceSchema, rawInput);
  if (input.paymentCurrency && !company.acceptedAssets.includes(PAYMENT_CURRENCY_INFO[input.paymentCurrency].asset)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `this merchant does not accept ${input.paymentCurrency}` }]);
  }
  if (idempotencyKey != null && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
    throw new ValidationError([{ path: 'Idempotency-Key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters` }]);
  }
  const fingerprint = idempotencyKey ? requestFingerprint(input) : '';
  const replay = async (): Promise<CreateResult | null> => {
    if (!idempotencyKey) return null;
    const prior = await deps.db.idempotencyKey.findUnique({ where: { companyId_key: { companyId: company.id, key: idempotencyKey } } });
    if (!prior) return null;
    if (prior.operation !== 'createInvoice' || prior.requestHash !== fingerprint) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    const invoiceId = (prior.responseBody as { invoiceId: string }).invoiceId;
    return { invoice: await getInvoiceRecord(deps.db, invoiceId), replayed: true };
  };

  const earlier = await replay();
  if (earlier) return earlier;

  const id = newInvoiceId();
  const createdAt = await deps.clock.now(company.id);
  const items = input.items.map((item, position) => ({ invoiceId: id, position, name: item.name, price: new Prisma.Decimal(item.price.toFixed()) }));
  let invoice;
  try {
    invoice = await deps.db.$transaction(async (tx) => {
      if (idempotencyKey) {
        // First, so a concurrent twin waits on this row and then fails on the unique key.
        await tx.idempotencyKey.create({
          data: {
            companyId: company.id,
            key: idempotencyKey,
            operation: 'createInvoice',
            requestHash: fingerprint,
            responseStatus: 201,
            responseBody: { invoiceId: id },
          },
        });
      }
      const created = await tx.invoice.create({
        data: {
          id,
          companyId: company.id,
          invoiceCurrency: input.invoiceCurrency,
          fixedPaymentCurrency: input.paymentCurrency,
          isMerchantPaysFee: input.isMerchantPaysFee,
          requestedRedirectUrl: input.redirectURL,
          redirectUrl: input.redirectURL ?? company.redirectUrl,
          total: input.total.toFixed(),
          createdAt,
        },
      });
      await tx.invoiceItem.createMany({ data: items });
      await recordInvoiceEvent(tx, company.id, id, 'created');
      return created;
    });
  } catch (e) {
    if (idempotencyKey && isUniqueViolation(e)) {
      const twin = await replay();
      if (twin) return twin;
      throw new ConflictError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is in progress; retry later');
    }
    throw e;
  }
  deps.notify?.();
  // Everything the response shows was just written or is at hand: no read-back.
  return { invoice: { ...invoice, company, items, address: null, transfers: [], refund: null }, replayed: false };
}

export async function getInvoiceRecord(db: Db, id: string): Promise<InvoiceRecord> {
  const invoice = INVOICE_ID_PATTERN.test(id) ? await db.invoice.findUnique({ where: { id }, include: invoiceInclude }) : null;
  if (!invoice) throw new NotFoundError(`No invoice with id ${id}`);
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
  rawInput: unknown,
  actingCompany: Company | null,
): Promise<InvoiceRecord> {
  const current = await getInvoiceRecord(deps.db, invoiceId);
  if (actingCompany && actingCompany.id !== current.companyId) throw new NotFoundError(`No invoice with id ${invoiceId}`);
  const input = parseInput(proceedInvoiceSchema(current.fixedPaymentCurrency !== null), rawInput);
  const paymentCurrency = (current.fixedPaymentCurrency ?? input.paymentCurrency) as PaymentCurrency;
  if (!isPaymentCurrency(paymentCurrency)) throw new Error(`stored payment currency ${paymentCurrency} is unknown`);
  const info = PAYMENT_CURRENCY_INFO[paymentCurrency];
  if (!current.company.acceptedAssets.includes(info.asset)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `this merchant does not accept ${paymentCurrency}` }]);
  }

  if (current.status !== 'created') return sameFillOrConflict(current, input.clientEmail, paymentCurrency);

  if (!isInvoiceCurrency(current.invoiceCurrency)) throw new Error(`stored invoice currency ${current.invoiceCurrency} is unknown`);
  const rate = await deps.rates.rate(current.invoiceCurrency, paymentCurrency);
  const quote = quotePayment({
    total: toMoney(current.total),
    rate,
    fee: deps.fees[paymentCurrency],
    paymentCurrency,
    isMerchantPaysFee: current.isMerchantPaysFee,
  });
  if (!fitsColumn(quote.paymentAmount)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `the invoice total is too large to be paid in ${paymentCurrency}` }]);
  }
  const allocated = await deps.chains.forNetwork(info.network).allocateAddress({
    companyId: current.companyId,
    invoiceId,
    paymentCurrency,
  });
  const now = await deps.clock.now(current.companyId);
  const filled = await deps.db.$transaction(async (tx) => {
    // Conditional update: of two racing fills exactly one moves the invoice out of `created`.
    const moved = await tx.invoice.updateMany({
      where: { id: invoiceId, status: 'created' },
      data: {
        status: 'pending',
        clientEmail: input.clientEmail,
        paymentCurrency,
        rate: quote.rate.toFixed(),
        invoiceFee: quote.invoiceFee.toFixed(),
        paymentAmount: quote.paymentAmount.toFixed(),
        expiredAt: expiryFor(paymentCurrency, now),
        proceededAt: now,
      },
    });
    if (moved.count === 0) return false;
    await tx.paymentAddress.create({
      data: {
        id: randomUUID(),
        companyId: current.companyId,
        invoiceId,
        asset: paymentCurrency,
        address: allocated.address,
        tag: allocated.tag,
      },
    });
    await recordInvoiceEvent(tx, current.companyId, invoiceId, 'pending');
    return true;
  });
  if (filled) deps.notify?.();
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
