// The spec's invoice paths, mapped onto the invoice services, plus the merchant's decisions on short payments.
import type { Services } from '../core/feature.ts';
import { idempotencyKeySchema } from '../core/idempotency.ts';
import { preferredLanguage } from '../domain/languages.ts';
import { route, type Route } from '../http/router.ts';
import { acceptInvoice, proceedInvoice, refundInvoice } from './lifecycle.ts';
import { z } from 'zod';
import { invoiceSchema, presentInvoice } from './presenter.ts';
import { getInvoiceRecord, type InvoiceRecord } from './queries.ts';
import { offeredIn } from '../chains/offered.ts';
import { createInvoiceSchema, proceedInvoiceSchema, refundInvoiceSchema } from './rules.ts';
import { createInvoice } from './service.ts';

const withTransactions = { withTransactions: true };

/** The REST invoice of either mode, with its mode also in the `Payrail-Mode` header (the public read has no token to tell it). */
const invoiceBody = (ctx: Services, invoice: InvoiceRecord, status: number, options = {}, headers: Record<string, string> = {}) => ({
  status,
  body: presentInvoice(invoice, offeredIn(ctx.invoices.chains, invoice.company.mode), ctx.invoices.payUrl, options),
  headers: { 'payrail-mode': invoice.company.mode, ...headers },
});

const TAG = 'Invoices';
const params = { id: z.string().meta({ description: 'The invoice id.', example: '7Qx3hHq1bXo9b3kQmZzJ2f' }) };
const invoiceAnswer = (description: string) => ({ description, schema: invoiceSchema });

export const invoiceRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular',
    auth: 'required',
    scope: 'invoices:write',
    body: createInvoiceSchema,
    doc: {
      operationId: 'createInvoice',
      summary: 'Create a regular invoice',
      description:
        'A fixed-amount invoice: priced items in the invoice currency (rounded to its precision; the total must be greater than 0). Prices may be JSON numbers (read exactly) or decimal strings. With an `Idempotency-Key` a retry answers the first invoice instead of creating another. `orderId` does the same per order: while an invoice with that `orderId` is open (created, pending, processing or wrong), the same request answers it (200, `Idempotent-Replayed: true`) and another request is a 409 `ORDER_ID_IN_USE`. `orderId` and `metadata` come back in every read and invoice webhook.',
      tag: TAG,
      headers: {
        'Idempotency-Key': {
          description: 'Makes a retry safe: the same key with the same request answers the first invoice (200, `Idempotent-Replayed: true`) for 24 hours; with another request it is a 409.',
          schema: idempotencyKeySchema,
        },
      },
      requestExample: {
        invoiceCurrency: 'usd',
        items: [
          { name: 'Coffee', price: 4.5 },
          { name: 'Cake', price: '3.25' },
        ],
        isMerchantPaysFee: false,
        paymentCurrency: null,
        redirectURL: 'https://shop.example/thanks',
        orderId: 'order-1042',
        metadata: { customerId: 'c_981' },
      },
      responses: {
        201: invoiceAnswer('Created, with status `created`.'),
        200: { ...invoiceAnswer('A replay of an earlier request with the same `Idempotency-Key`, or of the same order (`orderId`) while its invoice is open: that invoice, as it is now.'), headers: { 'Idempotent-Replayed': '`true`' } },
      },
      errors: [409],
    },
    handler: async (req, ctx) => {
      const key = req.headers['idempotency-key'];
      const { invoice, replayed } = await createInvoice(ctx.invoices, req.company!, req.body, typeof key === 'string' ? key : null);
      return invoiceBody(ctx, invoice, replayed ? 200 : 201, {}, replayed ? { 'idempotent-replayed': 'true' } : {});
    },
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/proceed',
    auth: 'optional',
    scope: 'invoices:write',
    body: proceedInvoiceSchema,
    doc: {
      operationId: 'proceedInvoice',
      summary: 'Fill an invoice with client info',
      description:
        "The client's e-mail and payment currency (and `lang`, the language of the client's e-mails: `en` or `de`; absent, the request's `Accept-Language` decides, else English): assigns the payment address, the quote and `expiredAt` (status `pending`). `paymentCurrency` is ignored when the merchant fixed one. Repeating the same fill answers the same invoice; anything else on an invoice that is no longer `created` is a 409. No token is needed; a valid token of another merchant is a 404.",
      tag: TAG,
      params,
      requestExample: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' },
      responses: { 200: invoiceAnswer('The filled invoice, with clientEmail, address, paymentDetails, redirectURL and expiredAt.') },
      errors: [404, 409],
    },
    handler: async (req, ctx) => {
      const acceptLanguage = req.headers['accept-language'];
      const lang = req.body.lang ?? preferredLanguage(typeof acceptLanguage === 'string' ? acceptLanguage : null);
      return invoiceBody(ctx, await proceedInvoice(ctx.invoices, req.params['id']!, { ...req.body, lang }, req.company), 200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/invoices/v1/regular/:id',
    auth: 'optional',
    scope: 'invoices:read',
    doc: {
      operationId: 'getInvoice',
      summary: 'Read an invoice',
      description: 'Public: for the client paying it and for the merchant. Its content depends on its status; `invoiceTransactions` once a transaction exists. `mode` (and the `Payrail-Mode` header) tells a test-mode invoice from a live one. No token is needed; with one, only that merchant\'s invoices of that mode are found (another\'s, or the other mode\'s, is a 404, as for proceed).',
      tag: TAG,
      params,
      modeHeader: true,
      responses: { 200: invoiceAnswer('The invoice.') },
      errors: [404],
    },
    handler: async (req, ctx) => invoiceBody(ctx, await getInvoiceRecord(ctx.db, req.params['id']!, req.company), 200, withTransactions),
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/accept',
    auth: 'required',
    scope: 'invoices:write',
    doc: {
      operationId: 'acceptInvoice',
      summary: 'Accept a short payment',
      description: 'The merchant keeps a `wrong` (short) payment, or a late payment to a closed invoice: the invoice becomes `done` (docs/payments.md).',
      tag: TAG,
      params,
      responses: { 200: invoiceAnswer('The invoice, now `done`.') },
      errors: [404, 409],
    },
    handler: async (req, ctx) => {
      await acceptInvoice(ctx.invoices, req.company!, req.access!.actor, req.params['id']!);
      return invoiceBody(ctx, await getInvoiceRecord(ctx.db, req.params['id']!), 200, withTransactions);
    },
  }),
  route({
    method: 'POST',
    path: '/api/invoices/v1/regular/:id/refund',
    auth: 'required',
    scope: 'payouts:write',
    body: refundInvoiceSchema,
    doc: {
      operationId: 'refundInvoice',
      summary: 'Decline a short payment and refund it',
      description: 'Returns a `wrong` invoice\'s payment (less the network fee) to the address given: the invoice becomes `refunded` and carries `refund` (docs/payments.md).',
      tag: TAG,
      params,
      requestExample: { address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', tag: '' },
      responses: { 200: invoiceAnswer('The invoice, now `refunded`, with `refund`.') },
      errors: [404, 409],
    },
    handler: async (req, ctx) => {
      await refundInvoice(ctx.invoices, req.company!, req.access!.actor, req.params['id']!, req.body);
      return invoiceBody(ctx, await getInvoiceRecord(ctx.db, req.params['id']!), 200, withTransactions);
    },
  }),
];
