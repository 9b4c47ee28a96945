// Creating invoices. The rest of the lifecycle is in lifecycle.ts; reads are in queries.ts.
import { Prisma, type Invoice } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { eventCtes } from '../core/events.ts';
import { columnsOf, prepared } from '../db/prepared.ts';
import { fingerprint, idempotent } from '../core/idempotency.ts';
import { ConflictError, ValidationError } from '../errors/app-error.ts';
import { requireOffered } from '../chains/offered.ts';
import { newInvoiceId } from './ids.ts';
import type { PaymentCurrency } from '../domain/assets.ts';
import type { InvoiceDeps } from './lifecycle.ts';
import { getInvoiceRecord, type InvoiceRecord } from './queries.ts';
import { acceptsCurrency, type CreateInvoiceInput } from './rules.ts';
import { invoiceStatusEvent } from './status.ts';

export interface CreateResult {
  invoice: InvoiceRecord;
  /** True when an Idempotency-Key matched an earlier request and nothing new was created. */
  replayed: boolean;
}

/** A payment currency the merchant fixes (an invoice's, a payment link's) must be one it accepts and its mode offers. */
export function checkFixedCurrency(deps: Pick<InvoiceDeps, 'chains'>, company: Pick<Company, 'acceptedAssets' | 'mode'>, currency: PaymentCurrency | null): void {
  if (!currency) return;
  if (!acceptsCurrency(company.acceptedAssets, currency)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `this merchant does not accept ${currency}` }]);
  }
  requireOffered(deps.chains, company.mode, currency, 'paymentCurrency');
}

/** Where an invoice came from besides the API: the payment link whose opening made it. */
export interface InvoiceOrigin {
  paymentLinkId?: string | null;
}

/**
 * A new invoice of `company`. What the input leaves out (isMerchantPaysFee, redirectURL) is the store's default
 * (store settings, docs/api-decisions.md, "Store settings") at this moment.
 */
export async function createInvoice(
  deps: InvoiceDeps,
  company: Company,
  input: CreateInvoiceInput,
  idempotencyKey?: string | null,
  origin: InvoiceOrigin = {},
): Promise<CreateResult> {
  checkFixedCurrency(deps, company, input.paymentCurrency);
  if (!input.orderId) return insertInvoice(deps, company, input, idempotencyKey, null, origin);
  // The order reference is the shop's own idempotency key: an open invoice of the order answers, a new one is
  // made only when there is none. The partial unique index decides races (migration ..._invoice_order_reference).
  const requestHash = fingerprint(input);
  for (let attempt = 1; ; attempt++) {
    const open = await openInvoiceOfOrder(deps, company.id, input.orderId);
    if (open) {
      if (open.requestHash !== requestHash) {
        throw new ConflictError(
          'ORDER_ID_IN_USE',
          `The open invoice ${open.id} has this orderId and was created from a different request; repeat that request to get it, or wait until it is final (docs/payments.md, "Order references")`,
          [{ path: 'orderId', message: `is used by the open invoice ${open.id}` }],
        );
      }
      return { invoice: await getInvoiceRecord(deps.db, open.id), replayed: true };
    }
    try {
      return await insertInvoice(deps, company, input, idempotencyKey, requestHash, origin);
    } catch (e) {
      // A twin committed first: read it on the next turn. (It may be final by then: then this one is made.)
      if (!isOrderIdTaken(e) || attempt >= 3) throw e;
    }
  }
}

/** Open: not final yet, the order may still be paid through it (docs/payments.md, "Order references"). */
export const ORDER_OPEN_STATUSES = ['created', 'pending', 'processing', 'wrong'] as const;

const openInvoiceOfOrder = async (deps: InvoiceDeps, companyId: string, orderId: string) => {
  const [row] = await deps.db.$queryRaw<{ id: string; requestHash: string | null }[]>`
    SELECT "id", "requestHash" FROM "Invoice"
    WHERE "companyId" = ${companyId}::uuid AND "orderId" = ${orderId} AND "status"::text IN (${Prisma.join([...ORDER_OPEN_STATUSES])})`;
  return row ?? null;
};

/** The unique violation of the open-order index (a raw query's error: P2010 with the driver's message in `meta`). */
const isOrderIdTaken = (e: unknown): boolean =>
  e instanceof Prisma.PrismaClientKnownRequestError && JSON.stringify(e.meta ?? null).includes('Invoice_open_orderId_key');

async function insertInvoice(
  deps: InvoiceDeps,
  company: Company,
  input: CreateInvoiceInput,
  idempotencyKey: string | null | undefined,
  requestHash: string | null,
  origin: InvoiceOrigin,
): Promise<CreateResult> {
  const id = newInvoiceId();
  const extras = { orderId: input.orderId, metadata: input.metadata };
  const items = input.items.map((item, position) => ({ invoiceId: id, position, name: item.name, price: new Prisma.Decimal(item.price.toFixed()) }));
  const { result, replayed } = await idempotent(
    deps,
    { companyId: company.id, key: idempotencyKey, operation: 'createInvoice', input, ttlMs: deps.idempotencyTtlMs },
    {
      // The invoice, its items, its event and delivery: one statement (the hot path of the API).
      singleStatement: true,
      execute: async (tx) => {
        const [created] = await tx.$queryRaw<Invoice[]>(prepared(Prisma.sql`
          WITH new_invoice AS (
            INSERT INTO "Invoice" ("id", "companyId", "status", "invoiceCurrency", "fixedPaymentCurrency", "isMerchantPaysFee",
              "requestedRedirectUrl", "redirectUrl", "total", "paymentLinkId", "orderId", "metadata", "requestHash", "createdAt", "updatedAt")
            VALUES (${id}, ${company.id}::uuid, 'created', ${input.invoiceCurrency}, ${input.paymentCurrency}, ${input.isMerchantPaysFee ?? company.isMerchantPaysFee},
              ${input.redirectURL}, ${input.redirectURL ?? company.redirectUrl}, ${input.total.toFixed()}::numeric, ${origin.paymentLinkId ?? null},
              ${input.orderId}, ${input.metadata ? JSON.stringify(input.metadata) : null}::json, ${requestHash},
              ${deps.clock.companyNowSql(Prisma.sql`${company.id}::uuid`)}, now())
            RETURNING ${columnsOf(Prisma.InvoiceScalarFieldEnum)}
          ),
          new_items AS (
            INSERT INTO "InvoiceItem" ("invoiceId", "position", "name", "price")
            SELECT ${id}, t."position", t."name", t."price"
            FROM unnest(${items.map((i) => i.position)}::int[], ${items.map((i) => i.name)}::text[], ${items.map((i) => i.price.toFixed())}::numeric[])
              AS t("position", "name", "price")
          ),
          ${eventCtes(invoiceStatusEvent(company.id, id, 'created', extras))}
          SELECT * FROM new_invoice`));
        // Everything the response shows was just written or is at hand: no read-back.
        const invoice: InvoiceRecord = { ...created!, company, items, address: null, transfers: [], autoswaps: [], refund: null };
        return { result: invoice, stored: { invoiceId: id }, events: ['invoice.created'] };
      },
      replay: async (stored) => getInvoiceRecord(deps.db, (stored as { invoiceId: string }).invoiceId),
    },
  );
  return { invoice: result, replayed };
}
