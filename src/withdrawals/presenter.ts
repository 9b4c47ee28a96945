import { z } from 'zod';
import type { Withdrawal } from '../../generated/prisma/client.ts';
import { PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { formatPlain, toMoney } from '../domain/money.ts';
import { decimalString, exactNumber, isoInstant, nextCursor } from '../http/schemas.ts';
import { WITHDRAWAL_STATUSES } from './model.ts';

/** A withdrawal as REST reads show it (amounts as exact strings, like every amount we compute). */
export interface WithdrawalView {
  uid: string;
  status: string;
  asset: string;
  amount: string;
  fee: string;
  /** amount + fee: what it took from the balance. */
  total: string;
  to: string;
  tag: string | null;
  txHash: string | null;
  origin: string;
  rejectReason: string | null;
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
}

export const presentWithdrawal = (w: Withdrawal): WithdrawalView => ({
  uid: w.uid,
  status: w.status,
  asset: w.asset,
  amount: formatPlain(toMoney(w.amount)),
  fee: formatPlain(toMoney(w.fee)),
  total: formatPlain(toMoney(w.amount).plus(toMoney(w.fee))),
  to: w.toAddress,
  tag: w.tag,
  txHash: w.txHash,
  origin: w.origin,
  rejectReason: w.rejectReason,
  createdAt: w.createdAt.toISOString(),
  sentAt: w.sentAt?.toISOString() ?? null,
  completedAt: w.completedAt?.toISOString() ?? null,
});

// The REST bodies of withdrawals as the OpenAPI document shows them (docs/openapi.md).

export const withdrawalSchema = z
  .strictObject({
    uid: z.string().meta({ description: 'The same uid as in the withdraw result and the withdrawal webhooks.' }),
    status: z.enum(WITHDRAWAL_STATUSES),
    asset: z.enum(PAYMENT_CURRENCIES),
    amount: decimalString.meta({ description: 'Net: what the receiver gets.' }),
    fee: decimalString.meta({ description: 'The network fee, charged on top.' }),
    total: decimalString.meta({ description: 'amount + fee: what it took from the balance.' }),
    to: z.string(),
    tag: z.string().nullable(),
    txHash: z.string().nullable().meta({ description: 'The bare transaction hash once the chain has it.' }),
    origin: z.enum(['api', 'auto']).meta({ description: 'A withdraw call, or an auto-withdrawal rule.' }),
    rejectReason: z.string().nullable(),
    createdAt: isoInstant,
    sentAt: isoInstant.nullable(),
    completedAt: isoInstant.nullable(),
  })
  .meta({ id: 'Withdrawal', description: 'A payout from the merchant\'s balance (docs/withdrawals.md).' }) satisfies z.ZodType<WithdrawalView>;

export const withdrawalPageSchema = z
  .strictObject({ withdrawals: z.array(withdrawalSchema).meta({ description: 'Newest first; one call\'s items in request order.' }), nextCursor })
  .meta({ id: 'WithdrawalList' });

export const withdrawResultSchema = z
  .strictObject({
    message: z.string().meta({ description: '`Withdrawal accepted and processing`, or why the item was refused.' }),
    success: z.boolean(),
    uid: z.string().meta({ description: 'The withdrawal\'s uid; empty when refused (nothing was created).' }),
  })
  .meta({ id: 'WithdrawResult', description: 'The outcome of one item, in request order.' });

export const autoWithdrawalsSchema = z
  .strictObject({
    autoWithdrawals: z
      .array(
        z
          .strictObject({
            assetId: z.enum(PAYMENT_CURRENCIES),
            amount: exactNumber.meta({ description: 'The threshold, a JSON number with exact digits.' }),
            isEnabled: z.boolean(),
            withdrawalTag: z.string().nullable().meta({ description: 'Required for TON; null otherwise.' }),
            withdrawalAddress: z.string().meta({ description: 'Empty when never set.' }),
          })
          .meta({ id: 'AutoWithdrawal' }),
      )
      .meta({ description: 'One entry per payment currency, in the order of the payment currency table.' }),
  })
  .meta({ id: 'AutoWithdrawals' });
