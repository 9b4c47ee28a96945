// The spec's withdrawal rules as pure functions: the request shape (a malformed request is one 4xx) and the
// per-item checks (a refused item is `success: false` with a message). The balance rule (3) needs the ledger and
// lives with the hold; everything here is decided from the request alone.
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { MAX_AMOUNT, Money, toMoney } from '../domain/money.ts';
import { decimal, tag } from '../core/validation.ts';

/** Items per withdraw call: a bulk withdrawal is one transaction, so its size is bounded. */
export const MAX_WITHDRAWAL_ITEMS = 100;

export const withdrawItemSchema = z
  .object({
    amount: decimal({ positive: true, max: MAX_AMOUNT }),
    // An empty tag is no tag (rule 6 accepts "" for untagged assets).
    tag: z.union([z.literal(''), tag]).nullish().transform((t) => t || null),
    to: z.string().trim().min(1, 'must not be empty').max(128),
    asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }),
  })
  // Finer than the chain can send: a malformed amount, not a refusal.
  .superRefine((item, ctx) => {
    const decimals = PAYMENT_CURRENCY_INFO[item.asset].decimals;
    if (item.amount.decimalPlaces() > decimals) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: `has more than ${decimals} decimal places, the smallest unit of ${item.asset}` });
    }
  });

export const withdrawRequestSchema = z.object({
  items: z.array(withdrawItemSchema).min(1, 'must hold at least one item').max(MAX_WITHDRAWAL_ITEMS, `must hold at most ${MAX_WITHDRAWAL_ITEMS} items`),
});

export type WithdrawItem = z.output<typeof withdrawItemSchema>;

/** What one item costs: the net amount the receiver gets plus the network fee charged on top (rule 2). */
export interface WithdrawalQuote {
  asset: PaymentCurrency;
  amount: Decimal;
  fee: Decimal;
  /** amount + fee: what leaves the merchant's available balance. */
  total: Decimal;
  minimum: Decimal;
}

export function quoteWithdrawal(asset: PaymentCurrency, amount: Decimal): WithdrawalQuote {
  const info = PAYMENT_CURRENCY_INFO[asset];
  const fee = toMoney(info.withdrawalFee);
  return { asset, amount, fee, total: amount.plus(fee), minimum: toMoney(info.minWithdrawal) };
}

/** Why an item is refused before any money is looked at (rules 1, 4, 6), or null. */
export function itemProblem(item: WithdrawItem, isValidAddress: (asset: PaymentCurrency, address: string) => boolean): string | null {
  const info = PAYMENT_CURRENCY_INFO[item.asset];
  const quote = quoteWithdrawal(item.asset, item.amount);
  if (item.amount.lt(quote.minimum)) return `Amount is below the minimum withdrawal of ${quote.minimum.toFixed()} ${item.asset}`;
  // Rule 4 by address format; rule 5: a valid address of another network with the same format passes.
  if (!isValidAddress(item.asset, item.to)) return `Receiver address is not a valid ${item.asset} address`;
  if (info.tagged && !item.tag) return `A tag is required for ${item.asset}`;
  if (!info.tagged && item.tag) return `${item.asset} takes no tag; send an empty string`;
  return null;
}

/** The sum of `total` over items of one asset (rule 3 compares it with the available balance). */
export const totalOf = (quotes: WithdrawalQuote[]): Decimal => quotes.reduce((sum, q) => sum.plus(q.total), new Money(0));
