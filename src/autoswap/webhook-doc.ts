// The autoswap webhook body as the OpenAPI document publishes it (docs/webhooks.md, docs/autoswap.md); service.ts
// autoswapEvent builds it: `type` first, then the autoswap entry the invoice's invoiceTransactions shows.
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import { autoswapEntrySchema } from './presenter.ts';

export const autoswapWebhookSchema = z
  .strictObject({ type: z.literal('autoswap'), ...autoswapEntrySchema.shape })
  .meta({ id: 'AutoswapWebhook', description: 'The autoswap entry of the invoice (or deposit) after `type`; sent once it is final. The body is exactly `JSON.stringify` of this object.' });

export const autoswapWebhook: WebhookDoc = {
  name: 'autoswap',
  summary: 'Autoswap done or failed',
  description: 'Sent when an autoswap of a credit is final (event types `autoswap.done`, `autoswap.failed`): the source amount was converted, or released in its own currency (docs/autoswap.md).',
  schema: autoswapWebhookSchema,
  example: {
    type: 'autoswap',
    id: '0193f1c2-5d1e-7a6b-9c3d-2e4f5a6b7c8d',
    kind: 'autoswap',
    from: 'btc',
    amount: '0.0015',
    to: 'trc20usdt',
    toAmount: '98.41',
    rate: '65606.666666666666',
    status: 'done',
    txHash: 'sandbox-swap-0193f1c2',
    companyId: '0193f1c2-0000-7000-8000-000000000001',
    invoiceId: '7Qx3hHq1bXo9b3kQmZzJ2f',
    addressId: '0193f1c2-0000-7000-8000-000000000002',
    createdAt: '2026-11-21T10:00:00.000Z',
    reason: null,
  },
};
