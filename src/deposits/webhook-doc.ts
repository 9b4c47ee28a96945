// The static deposit webhook body as the OpenAPI document publishes it (docs/webhooks.md); processor.ts depositEvent builds it.
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import { COMPANY_ASSETS, NETWORKS } from '../domain/assets.ts';
import { decimalString } from '../http/schemas.ts';
import { DEPOSIT_FEE_PAYER } from './processor.ts';
import { DEPOSIT_STATUS } from './service.ts';

export const depositWebhookSchema = z
  .strictObject({
    amount: decimalString.meta({ description: 'The deposited amount.' }),
    asset: z.enum(COMPANY_ASSETS),
    network: z.enum(NETWORKS),
    depositAddress: z.string().meta({ description: 'The static address that received it.' }),
    status: z.enum(Object.values(DEPOSIT_STATUS) as [string, ...string[]]).meta({ description: 'processing, done, failed or frozen.' }),
    id: z.string().meta({ description: 'The static address id.' }),
    internal_user_id: z.string().meta({ description: 'Your id of the address owner.' }),
    hash: z.string().meta({ description: 'The bare transaction hash.' }),
    email: z.string().optional().meta({ description: "The owner's e-mail; absent when the address has none." }),
    feePayer: z.enum(['buyer', 'merchant']).meta({ description: `Who pays the deposit fee; this service: ${DEPOSIT_FEE_PAYER}.` }),
  })
  .meta({ id: 'DepositWebhook', description: "The spec's static deposit webhook, in its key order." });

export const depositWebhook: WebhookDoc = {
  name: 'deposit',
  summary: 'Deposit to a static address',
  description: 'Sent for deposits to static addresses: event types `deposit.processing`, `deposit.done`, `deposit.failed`, `deposit.frozen` (docs/deposits.md).',
  schema: depositWebhookSchema,
  example: {
    amount: '25',
    asset: 'usdt',
    network: 'tron',
    depositAddress: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    status: 'done',
    id: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    internal_user_id: 'user-17',
    hash: 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f',
    feePayer: 'merchant',
  },
};
