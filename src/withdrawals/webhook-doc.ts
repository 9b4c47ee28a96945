// The withdrawal webhook body as the OpenAPI document publishes it (docs/webhooks.md); model.ts withdrawalEvent builds it.
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import { COMPANY_ASSETS, PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { decimalString } from '../http/schemas.ts';
import { WITHDRAWAL_STATUSES } from './model.ts';

export const withdrawalWebhookSchema = z
  .strictObject({
    type: z.literal('withdrawal'),
    status: z.enum(WITHDRAWAL_STATUSES).meta({ description: 'processing (twice: first with an empty txHash, then with it), done, rejected (no txHash key).' }),
    asset: z.enum(COMPANY_ASSETS).meta({ description: 'The withdrawn asset.' }),
    dchain: z.enum(PAYMENT_CURRENCIES).meta({ description: 'Asset plus network.' }),
    amount: z.number().meta({ description: 'The amount sent, a JSON number written with every digit (never through a float).' }),
    fee: decimalString.meta({ description: 'The withdrawal fee.' }),
    to: z.string().meta({ description: 'The receiver address.' }),
    txHash: z.string().optional().meta({ description: 'The bare transaction hash; empty on the first processing webhook; absent when rejected.' }),
    uid: z.string().meta({ description: 'The withdrawal uid of the withdraw answer.' }),
  })
  .meta({ id: 'WithdrawalWebhook', description: "The spec's withdrawal webhook, in its key order." });

export const withdrawalWebhook: WebhookDoc = {
  name: 'withdrawal',
  summary: 'Withdrawal status',
  description: 'Sent for withdrawals (manual, bulk and auto): event types `withdrawal.processing`, `withdrawal.done`, `withdrawal.rejected` (docs/withdrawals.md).',
  schema: withdrawalWebhookSchema,
  example: { type: 'withdrawal', status: 'done', asset: 'usdt', dchain: 'trc20usdt', amount: 10, fee: '1', to: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', txHash: 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f', uid: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' },
};
