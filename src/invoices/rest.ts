// The spec's invoice paths, mapped onto the invoice services, plus the merchant's decisions on short payments.
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { acceptInvoice, proceedInvoice, refundInvoice } from './lifecycle.ts';
import { presentInvoice } from './presenter.ts';
import { getInvoiceRecord } from './queries.ts';
import { createInvoiceSchema, proceedInvoiceSchema, refundInvoiceSchema } from './rules.ts';
import { createInvoice } from './service.ts';

const withTransactions = { withTransactions: true };

export const invoiceRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular',
    auth: 'required',
    body: createInvoiceSchema,
    handler: async (req, ctx) => {
      const key = req.headers['idempotency-key'];
      const { invoice, replayed } = await createInvoice(ctx.invoices, req.company!, req.body, typeof key === 'string' ? key : null);
      return { status: replayed ? 200 : 201, body: presentInvoice(invoice), headers: replayed ? { 'idempotent-replayed': 'true' } : undefined };
    },
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/proceed',
    auth: 'optional',
    body: proceedInvoiceSchema,
    handler: async (req, ctx) => ({ status: 200, body: presentInvoice(await proceedInvoice(ctx.invoices, req.params['id']!, req.body, req.company)) }),
  }),
  route({
    method: 'GET',
    path: '/api/invoices/v1/regular/:id',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 200, body: presentInvoice(await getInvoiceRecord(ctx.db, req.params['id']!), withTransactions) }),
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/accept',
    auth: 'required',
    handler: async (req, ctx) => {
      await acceptInvoice(ctx.invoices, req.company!, req.params['id']!);
      return { status: 200, body: presentInvoice(await getInvoiceRecord(ctx.db, req.params['id']!), withTransactions) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/refund',
    auth: 'required',
    body: refundInvoiceSchema,
    handler: async (req, ctx) => {
      await refundInvoice(ctx.invoices, req.company!, req.params['id']!, req.body);
      return { status: 200, body: presentInvoice(await getInvoiceRecord(ctx.db, req.params['id']!), withTransactions) };
    },
  }),
];
