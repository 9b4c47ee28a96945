// Autoswap's pure rules (docs/autoswap.md): the rule input, the least output a swap may fill at, retry delays, and
// the entry the merchant sees (invoiceTransactions, deposits, webhooks).
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { decimal } from '../core/validation.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, Money, toMoney } from '../domain/money.ts';

export const AUTOSWAP_STATUSES = ['queued', 'submitted', 'done', 'failed'] as const;
export type AutoSwapStatus = (typeof AUTOSWAP_STATUSES)[number];

/** The slippage cap a rule may set: above 0, at most 10 %, two decimal places (the column). */
export const MIN_SLIPPAGE_PERCENT = '0.01';
export const MAX_SLIPPAGE_PERCENT = '10';
export const DEFAULT_SLIPPAGE_PERCENT = '1';

const ruleSchema = z.object({
  isEnabled: z.boolean(),
  toCurrency: z.string().max(32).nullish().transform((c) => c ?? null),
  maxSlippagePercent: decimal({ min: MIN_SLIPPAGE_PERCENT, max: MAX_SLIPPAGE_PERCENT, shape: { integerDigits: 3, scale: 2 } }).optional(),
});

export const autoswapPatchSchema = z.object({
  assets: z
    .record(z.string().max(32), ruleSchema)
    .refine((r) => Object.keys(r).length >= 1, 'must name at least one asset')
    .refine((r) => Object.keys(r).length <= PAYMENT_CURRENCIES.length, `must name at most ${PAYMENT_CURRENCIES.length} assets`),
});

export type AutoswapPatch = z.output<typeof autoswapPatchSchema>;

export interface AutoswapRule {
  asset: PaymentCurrency;
  isEnabled: boolean;
  toCurrency: PaymentCurrency | null;
  maxSlippagePercent: string;
}

/**
 * The least amount of `to` a swap of `amount` may deliver: the rate now less the slippage cap, rounded down to the
 * target's smallest unit (never more than the rule allows).
 */
export function minimumOutput(amount: Decimal, rate: Decimal, maxSlippagePercent: Decimal, to: PaymentCurrency): Decimal {
  const share = new Money(100).minus(maxSlippagePercent).div(100);
  return new Money(amount).times(rate).times(share).toDecimalPlaces(PAYMENT_CURRENCY_INFO[to].decimals, Money.ROUND_DOWN);
}

/** When to try a swap again after `attempts` failed attempts: base, 2x, 4x, ... capped at an hour; null once they ran out. */
export function retryDelayMs(attempts: number, baseMs: number, maxAttempts: number): number | null {
  if (attempts >= maxAttempts) return null;
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

export interface AutoSwapRecord {
  id: string;
  companyId: string;
  fromCurrency: string;
  toCurrency: string;
  amount: { toString(): string };
  status: string;
  quotedRate: { toString(): string } | null;
  toAmount: { toString(): string } | null;
  ref: string | null;
  failReason: string | null;
  invoiceId: string | null;
  addressId: string | null;
  createdAt: Date;
}

/**
 * The rate an entry shows: once done, what the merchant got per unit sold (toAmount / amount); before, the rate
 * the minimum output was fixed from (null until then).
 */
export function entryRate(s: Pick<AutoSwapRecord, 'amount' | 'toAmount' | 'quotedRate' | 'status'>): string | null {
  if (s.status === 'done' && s.toAmount !== null) return formatPlain(toMoney(s.toAmount).div(toMoney(s.amount)).toDecimalPlaces(18, Money.ROUND_HALF_EVEN));
  return s.quotedRate === null ? null : formatPlain(s.quotedRate);
}

/** The merchant's view of a swap: an invoiceTransactions entry (kind autoswap), a deposit's swap, a webhook's body. */
export const presentAutoswap = (s: AutoSwapRecord) => ({
  id: s.id,
  kind: 'autoswap' as const,
  from: s.fromCurrency,
  amount: formatPlain(s.amount),
  to: s.toCurrency,
  toAmount: s.toAmount === null ? null : formatPlain(s.toAmount),
  rate: entryRate(s),
  status: s.status as AutoSwapStatus,
  txHash: s.ref,
  companyId: s.companyId,
  invoiceId: s.invoiceId,
  addressId: s.addressId,
  createdAt: s.createdAt.toISOString(),
  reason: s.failReason,
});

export type AutoswapEntry = ReturnType<typeof presentAutoswap>;
