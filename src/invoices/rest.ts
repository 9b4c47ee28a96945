// The spec's invoice paths, mapped onto the invoice service.
import type { Route } from '../http/router.ts';
import { presentInvoice } from './presenter.ts';
import { createInvoice, getInvoiceRecord, proceedInvoice, type InvoiceDeps } from './service.ts';

export interface InvoiceRestContext {
  invoices: InvoiceDeps;
}

export const invoiceRoutes: Route<InvoiceRestContext>[] = [
  {
    method: 'POST',
    path: '/api/invoices/v1/regular',
    auth: 'required',
    handler: async (req, ctx) => {
      const key = req.headers['idempotency-key'];
      const { invoice, replayed } = await createInvoice(ctx.invoices, req.company!, req.body, typeof key === 'string' ? key : null);
      return { status: replayed ? 200 : 201, body: presentInvoice(invoice), headers: replayed ? { 'idempotent-replayed': 'true' } : undefined };
    },
  },
  {
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/proceed',
    auth: 'optional',
    handler: async (req, ctx) => ({
      status: 200,
      body: presentInvoice(await proceedInvoice(ctx.invoices, req.params['id']!, req.body, req.company)),
    }),
  },
  {
    method: 'GET',
    path: '/api/invoices/v1/regular/:id',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 200, body: presentInvoice(await getInvoiceRecord(ctx.invoices.db, req.params['id']!)) }),
  },
];
