// Invoice reads: the public one by id and the merchant's connection; both through queries.ts.
import { ValidationError } from '../../errors/app-error.ts';
import { builder } from '../../graphql/builder.ts';
import { INVOICE_ID_PATTERN } from '../ids.ts';
import { invoiceListOrder, merchantInvoicesWhere, publicInvoiceWhere } from '../queries.ts';
import { InvoiceStatusEnum } from './types.ts';

builder.queryField('invoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    nullable: true,
    description: 'An invoice by its public id (no token needed, as in REST).',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => {
      const where = publicInvoiceWhere(String(id));
      return where ? ctx.db.invoice.findUnique({ ...query, where }) : null;
    },
  }),
);

const InvoiceFilter = builder.inputType('InvoiceFilter', {
  fields: (t) => ({
    status: t.field({ type: [InvoiceStatusEnum], required: false, description: 'Any of these statuses.' }),
    createdFrom: t.field({ type: 'DateTime', required: false, description: 'Created at or after this instant.' }),
    createdBefore: t.field({ type: 'DateTime', required: false, description: 'Created strictly before this instant.' }),
  }),
});

export const MAX_PAGE_SIZE = 100;

builder.queryField('invoices', (t) =>
  t.prismaConnection(
    {
      type: 'Invoice',
      cursor: 'id',
      authScopes: { merchant: true },
      description: 'The calling merchant’s invoices, newest first.',
      defaultSize: 20,
      maxSize: MAX_PAGE_SIZE,
      args: { filter: t.arg({ type: InvoiceFilter, required: false }) },
      resolve: (query, _root, { filter, first, last, after }, ctx) => {
        if ((first ?? 0) > MAX_PAGE_SIZE || (last ?? 0) > MAX_PAGE_SIZE) {
          throw new ValidationError([{ path: first ? 'first' : 'last', message: `must be at most ${MAX_PAGE_SIZE}` }]);
        }
        // A cursor is opaque to clients but not to forgers: what it decodes to must be an invoice id.
        const cursorId = (query as { cursor?: { id?: unknown } }).cursor?.id;
        if (cursorId !== undefined && !(typeof cursorId === 'string' && INVOICE_ID_PATTERN.test(cursorId))) {
          throw new ValidationError([{ path: after ? 'after' : 'before', message: 'must be a cursor from a previous page' }]);
        }
        return ctx.db.invoice.findMany({ ...query, where: merchantInvoicesWhere(ctx.company!, filter ?? undefined), orderBy: invoiceListOrder });
      },
      totalCount: (_root, { filter }, ctx) => ctx.db.invoice.count({ where: merchantInvoicesWhere(ctx.company!, filter ?? undefined) }),
    },
    {},
  ),
);
