// The spec's invoice paths, mapped onto the invoice service, plus the merchant's decisions on short payments.
import type { Route } from '../http/router.ts';
import { acceptInvoice, refundInvoice } from '../payments/decisions.ts';
import type { PaymentDeps } from '../payments/processor.ts';
import type { Logger } from '../logger.ts';
import { presentInvoice } from './presenter.ts';
import { createInvoice, getInvoiceRecord, proceedInvoice, type InvoiceDeps } from './service.ts';

export interface InvoiceRestContext {
  invoices: InvoiceDeps;
  payments: PaymentDeps;
  logger: Logger;
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
    handler: async (req, ctx) => ({
      status: 200,
      body: presentInvoice(await getInvoiceRecord(ctx.invoices.db, req.params['id']!), { withTransactions: true }),
    }),
  },
  {
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/accept',
    auth: 'required',
    handler: async (req, ctx) => {
      await acceptInvoice(ctx.payments, req.company!, req.params['id']!);
      return { status: 200, body: presentInvoice(await getInvoiceRecord(ctx.invoices.db, req.params['id']!), { withTransactions: true }) };
    },
  },
  {
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/refund',
    auth: 'required',
    handler: async (req, ctx) => {
      await refundInvoice(ctx.payments, req.company!, req.params['id']!, req.body, ctx.logger);
      return { status: 200, body: presentInvoice(await getInvoiceRecord(ctx.invoices.db, req.params['id']!), { withTransactions: true }) };
    },
  },
];
