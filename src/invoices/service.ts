// Creating invoices. The rest of the lifecycle is in lifecycle.ts; reads are in queries.ts.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { recordEvent } from '../core/events.ts';
import { idempotent } from '../core/idempotency.ts';
import { PAYMENT_CURRENCY_INFO } from '../domain/assets.ts';
import { ValidationError } from '../errors/app-error.ts';
import { newInvoiceId } from './ids.ts';
import type { InvoiceDeps } from './lifecycle.ts';
import { getInvoiceRecord, type InvoiceRecord } from './queries.ts';
import type { CreateInvoiceInput } from './rules.ts';
import { invoiceStatusEvent } from './status.ts';

export interface CreateResult {
  invoice: InvoiceRecord;
  /** True when an Idempotency-Key matched an earlier request and nothing new was created. */
  replayed: boolean;
}

export async function createInvoice(
  deps: InvoiceDeps,
  company: Company,
  input: CreateInvoiceInput,
  idempotencyKey?: string | null,
): Promise<CreateResult> {
  if (input.paymentCurrency && !company.acceptedAssets.includes(PAYMENT_CURRENCY_INFO[input.paymentCurrency].asset)) {
    throw new ValidationError([{ path: 'paymentCurrency', message: `this merchant does not accept ${input.paymentCurrency}` }]);
  }
  const id = newInvoiceId();
  const createdAt = await deps.clock.now(company.id);
  const items = input.items.map((item, position) => ({ invoiceId: id, position, name: item.name, price: new Prisma.Decimal(item.price.toFixed()) }));
  const { result, replayed } = await idempotent(
    deps,
    { companyId: company.id, key: idempotencyKey, operation: 'createInvoice', input, ttlMs: deps.idempotencyTtlMs },
    {
      execute: async (tx) => {
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
        await recordEvent(tx, invoiceStatusEvent(company.id, id, 'created'));
        // Everything the response shows was just written or is at hand: no read-back.
        const invoice: InvoiceRecord = { ...created, company, items, address: null, transfers: [], refund: null };
        return { result: invoice, stored: { invoiceId: id } };
      },
      replay: async (stored) => getInvoiceRecord(deps.db, (stored as { invoiceId: string }).invoiceId),
    },
  );
  return { invoice: result, replayed };
}
