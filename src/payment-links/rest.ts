// REST for payment links: POST/GET /api/payment-links, GET /api/payment-links/{id}, POST .../{id}/deactivate
// (docs/payment-links.md). The pages serve the links themselves (GET /l/{id}).
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import {
  createPaymentLink,
  createPaymentLinkSchema,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
  paymentLinkListSchema,
  paymentLinkPageSchema,
  paymentLinkSchema,
  presentPaymentLink,
} from './service.ts';

const TAG = 'PaymentLinks';
const params = { id: z.string().meta({ description: 'The payment link id.', example: 'pl_7Qx3hHq1bXo9b3kQmZzJ2f' }) };

export const paymentLinkRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/payment-links',
    auth: 'required',
    scope: 'invoices:write',
    body: createPaymentLinkSchema,
    doc: {
      operationId: 'createPaymentLink',
      summary: 'Create a payment link',
      description:
        'An invoice’s content behind a public URL: every opening of `url` makes a new invoice of it (with its `invoice.created` webhook) and sends the client to its checkout page. The fields are the invoice create body’s, checked the same way, plus `name` (yours, not shown to clients) and `active` (default true). `isMerchantPaysFee` and `redirectURL` left out are the store’s defaults at the time of each opening.',
      tag: TAG,
      requestExample: { name: 'Coffee beans 1 kg', invoiceCurrency: 'eur', items: [{ name: 'Coffee beans 1 kg', price: '24.90' }], paymentCurrency: null, active: true },
      responses: { 201: { description: 'The link, with its `url`.', schema: paymentLinkSchema } },
    },
    handler: async (req, ctx) => ({ status: 201, body: presentPaymentLink(ctx.paymentLinks, await createPaymentLink(ctx.paymentLinks, req.company!, req.body)) }),
  }),
  route({
    method: 'GET',
    path: '/api/payment-links',
    auth: 'required',
    scope: 'invoices:read',
    query: paymentLinkListSchema,
    doc: {
      operationId: 'listPaymentLinks',
      summary: 'List payment links',
      description: 'This mode’s links, newest first, a page at a time (`after`: the `nextCursor` of the previous page); `active` narrows to active or inactive ones.',
      tag: TAG,
      responses: { 200: { description: 'A page of links.', schema: paymentLinkPageSchema } },
    },
    handler: async (req, ctx) => {
      const { page, nextCursor } = await listPaymentLinks(ctx.paymentLinks, req.company!, req.query);
      return { status: 200, body: { paymentLinks: page.map((l) => presentPaymentLink(ctx.paymentLinks, l)), nextCursor } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/payment-links/:id',
    auth: 'required',
    scope: 'invoices:read',
    doc: {
      operationId: 'getPaymentLink',
      summary: 'Read a payment link',
      tag: TAG,
      params,
      responses: { 200: { description: 'The link.', schema: paymentLinkSchema } },
      errors: [404],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentPaymentLink(ctx.paymentLinks, await getPaymentLink(ctx.paymentLinks, req.company!, req.params['id']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/payment-links/:id/deactivate',
    auth: 'required',
    scope: 'invoices:write',
    doc: {
      operationId: 'deactivatePaymentLink',
      summary: 'Deactivate a payment link',
      description: 'For good: opening it shows a page saying the link is no longer active (410) and makes no invoice. Invoices it already made are not touched. Deactivating an inactive link answers it as it is.',
      tag: TAG,
      params,
      responses: { 200: { description: 'The link, inactive.', schema: paymentLinkSchema } },
      errors: [404],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentPaymentLink(ctx.paymentLinks, await deactivatePaymentLink(ctx.paymentLinks, req.company!, req.params['id']!)) }),
  }),
];
