import fs from 'node:fs';
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { PAYMENT_CURRENCIES, type PaymentCurrency } from '../domain/assets.ts';
import { Money, parseDecimal } from '../domain/money.ts';

/** Gateway fee for one payment currency: `percent` of the converted total plus a `fixed` amount. */
export interface FeeRule {
  percent: Decimal;
  fixed: Decimal;
}

export type FeeTable = Record<PaymentCurrency, FeeRule>;

const DEFAULT_RULE = { percent: '1', fixed: '0' };

export function defaultFeeTable(): FeeTable {
  return Object.fromEntries(
    PAYMENT_CURRENCIES.map((c) => [c, { percent: new Money(DEFAULT_RULE.percent), fixed: new Money(DEFAULT_RULE.fixed) }]),
  ) as FeeTable;
}

const nonNegative = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const d = parseDecimal(String(v));
  if (!d || d.isNegative()) {
    ctx.addIssue({ code: 'custom', message: 'must be a non-negative decimal' });
    return z.NEVER;
  }
  return d;
});

const feeFileSchema = z.partialRecord(
  z.enum(PAYMENT_CURRENCIES),
  z.object({ percent: nonNegative.optional(), fixed: nonNegative.optional() }).strict(),
);

/** FEES_FILE: `{"btc": {"percent": "0.5", "fixed": "0.00001"}, ...}`; currencies left out keep the default. */
export function loadFeeTable(path: string): FeeTable {
  const parsed = feeFileSchema.safeParse(JSON.parse(fs.readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const table = defaultFeeTable();
  for (const [currency, rule] of Object.entries(parsed.data) as [PaymentCurrency, { percent?: Decimal; fixed?: Decimal }][]) {
    table[currency] = { percent: rule.percent ?? table[currency].percent, fixed: rule.fixed ?? table[currency].fixed };
  }
  return table;
}
