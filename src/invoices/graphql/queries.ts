// Invoice reads: the public one by id and the merchant's connection; both through queries.ts.
import { requireScope } from '../../core/scopes.ts';
import { builder } from '../../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../../graphql/connections.ts';
import { INVOICE_ID_PATTERN } from '../ids.ts';
import { invoiceListOrder, merchantInvoicesWhere, publicInvoiceWhere } from '../queries.ts';
import { InvoiceStatusEnum } from './types.ts';

builder.queryField('invoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    nullable: true,
    description:
      'An invoice by its public id (no token needed, as in REST); null when there is none. With a token, only that merchant\'s invoices of that mode are found (as in REST).',
    args: { id: t.arg.id({ required: true, description: 'The public invoice id (also its global id).' }) },
    resolve: (query, _root, { id }, ctx) => {
      // A token is optional here; one that is sent must hold invoices:read (as for REST).
      if (ctx.access) requireScope(ctx.access, 'invoices:read');
      const where = publicInvoiceWhere(String(id));
      return where ? ctx.db.invoice.findFirst({ ...query, where: { ...where, ...(ctx.company ? { companyId: ctx.company.id } : {}) } }) : null;
    },
  }),
);

const InvoiceFilter = builder.inputType('InvoiceFilter', {
  description: 'Narrows the invoice list; every condition given must hold.',
  fields: (t) => ({
    status: t.field({ type: [InvoiceStatusEnum], required: false, description: 'Any of these statuses.' }),
    createdFrom: t.field({ type: 'DateTime', required: false, description: 'Created at or after this instant.' }),
    createdBefore: t.field({ type: 'DateTime', required: false, description: 'Created strictly before this instant.' }),
  }),
});


builder.queryField('invoices', (t) =>
  t.prismaConnection(
    {
      type: 'Invoice',
      cursor: 'id',
      authScopes: { scope: 'invoices:read' },
      description: 'The calling merchant’s invoices, newest first.',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: InvoiceFilter, required: false, description: 'Only the invoices that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, INVOICE_ID_PATTERN);
        return ctx.db.invoice.findMany({ ...query, where: merchantInvoicesWhere(ctx.company!, args.filter ?? undefined), orderBy: invoiceListOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, INVOICE_ID_PATTERN);
        return ctx.db.invoice.count({ where: merchantInvoicesWhere(ctx.company!, args.filter ?? undefined) });
      },
    },
    connectionNames('Invoice', 'invoices'),
    edgeNames('Invoice'),
  ),
);
