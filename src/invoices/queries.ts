// Invoice reads, for both API surfaces: one tenant filter, one shape of what is loaded.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import type { Db } from '../db/client.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { INVOICE_ID_PATTERN } from './ids.ts';
import type { InvoiceStatus } from './status.ts';

/** Everything the API surfaces present about an invoice. */
export const invoiceInclude = {
  company: true,
  items: { orderBy: { position: 'asc' } },
  address: true,
  transfers: { orderBy: [{ seenAt: 'asc' }, { id: 'asc' }] },
  autoswaps: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
  refund: true,
} satisfies Prisma.InvoiceInclude;

export type InvoiceRecord = Prisma.InvoiceGetPayload<{ include: typeof invoiceInclude }>;

/** Where clause of a read by public id; null when the text cannot be an invoice id (no query for it). */
export const publicInvoiceWhere = (id: string): Prisma.InvoiceWhereUniqueInput | null => (INVOICE_ID_PATTERN.test(id) ? { id } : null);

/**
 * By its public id: anyone holding the unguessable id may read the invoice (the spec's public GET). A caller who says
 * who it is (`reader`, a token) finds its own invoices only: another merchant's, or its other mode's, are not found.
 */
export async function getInvoiceRecord(db: Db, id: string, reader: Pick<Company, 'id'> | null = null): Promise<InvoiceRecord> {
  const where = publicInvoiceWhere(id);
  const invoice = where ? await db.invoice.findUnique({ where, include: invoiceInclude }) : null;
  if (!invoice || (reader && invoice.companyId !== reader.id)) throw new NotFoundError(`No invoice with id ${id}`);
  return invoice;
}

export interface InvoiceListFilter {
  status?: readonly InvoiceStatus[] | null;
  createdFrom?: Date | null;
  createdBefore?: Date | null;
}

/** The merchant's invoices matching the filter: the one tenant filter of invoice lists. */
export function merchantInvoicesWhere(company: Company, filter: InvoiceListFilter = {}): Prisma.InvoiceWhereInput {
  return {
    companyId: company.id,
    ...(filter.status?.length ? { status: { in: [...filter.status] } } : {}),
    ...(filter.createdFrom || filter.createdBefore
      ? { createdAt: { ...(filter.createdFrom ? { gte: filter.createdFrom } : {}), ...(filter.createdBefore ? { lt: filter.createdBefore } : {}) } }
      : {}),
  };
}

/** Newest first; the id breaks ties so pages never overlap. */
export const invoiceListOrder: Prisma.InvoiceOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];
