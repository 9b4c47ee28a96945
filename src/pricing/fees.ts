import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { PAYMENT_CURRENCIES, type PaymentCurrency } from '../domain/assets.ts';
import { Money } from '../domain/money.ts';
import { decimal, readConfigFile } from '../core/validation.ts';

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

const feeFileSchema = z.partialRecord(
  z.enum(PAYMENT_CURRENCIES),
  z.object({ percent: decimal({ min: 0, max: 100 }).optional(), fixed: decimal({ min: 0 }).optional() }).strict(),
);

/** FEES_FILE: `{"btc": {"percent": "0.5", "fixed": "0.00001"}, ...}`; currencies left out keep the default. */
export function loadFeeTable(path: string): FeeTable {
  const rules = readConfigFile(feeFileSchema, path);
  const table = defaultFeeTable();
  for (const [currency, rule] of Object.entries(rules) as [PaymentCurrency, { percent?: Decimal; fixed?: Decimal }][]) {
    table[currency] = { percent: rule.percent ?? table[currency].percent, fixed: rule.fixed ?? table[currency].fixed };
  }
  return table;
}
