// The invoice webhook body as the OpenAPI document publishes it (docs/webhooks.md); status.ts builds it.
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import { metadataSchema, orderIdSchema } from './rules.ts';
import { INVOICE_STATUS_MESSAGES, INVOICE_STATUSES, SETTLEMENTS } from './status.ts';

const messages = Object.values(INVOICE_STATUS_MESSAGES) as [string, ...string[]];

export const invoiceWebhookSchema = z
  .strictObject({
    invoiceId: z.string().meta({ description: 'The invoice id (REST `id`).' }),
    status: z.enum(INVOICE_STATUSES).meta({ description: 'The status the invoice entered.' }),
    message: z.enum(messages).meta({ description: "The spec's message of that status, verbatim (docs/webhooks.md, the status table)." }),
    orderId: orderIdSchema.optional().meta({ description: "The merchant's order reference given at creation; absent when none." }),
    metadata: metadataSchema.optional().meta({ description: 'The metadata given at creation, keys in the order sent; absent when none.' }),
    settlement: z.enum(SETTLEMENTS).optional().meta({
      description: "The merchant's decision that caused this status: `accepted_short` or `accepted_late` on `done`, `refunded` on `refunded`. Absent otherwise.",
    }),
  })
  .meta({
    id: 'InvoiceWebhook',
    description: "The spec's three fields first, in this order, then ours, each only when set. The body is exactly `JSON.stringify` of this object.",
  });

export const invoiceWebhook: WebhookDoc = {
  name: 'invoice',
  summary: 'Invoice status changed',
  description:
    'Sent when an invoice enters a status (event types `invoice.created` ... `invoice.closed`): created, pending, processing, done, wrong, refunded, closed. Late payments and payments in an unexpected asset are events but not webhooks (docs/webhooks.md).',
  schema: invoiceWebhookSchema,
  example: { invoiceId: '7Qx3hHq1bXo9b3kQmZzJ2f', status: 'done', message: 'Invoice paid', orderId: 'order-1042', metadata: { customerId: 'c_981' } },
};
