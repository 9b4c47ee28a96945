import { Decimal } from 'decimal.js';

// Our own Decimal constructor: enough precision for 38-digit amounts and never exponent notation in output.
export const Money = Decimal.clone({ precision: 60, toExpNeg: -60, toExpPos: 60 });
export type Money = Decimal;

const DECIMAL_LITERAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Parses a decimal literal exactly (no float on the way); null when it is not one. */
export function parseDecimal(text: string): Decimal | null {
  const trimmed = text.trim();
  if (!DECIMAL_LITERAL.test(trimmed)) return null;
  const value = new Money(trimmed);
  return value.isFinite() ? value : null;
}

/** Any decimal, including Prisma's own Decimal instances (another decimal.js copy), as ours. */
export const toMoney = (value: Decimal.Value | { toString(): string }): Decimal =>
  new Money(typeof value === 'object' ? value.toString() : value);

/** Item prices: half away from zero to the currency's places (what shoppers and tax rules expect). */
export const roundPrice = (value: Decimal, places: number): Decimal => value.toDecimalPlaces(places, Decimal.ROUND_HALF_UP);

/** Amounts a client must send: up to the chain's smallest unit, so the merchant never receives less. */
export const roundUpToUnit = (value: Decimal, places: number): Decimal => value.toDecimalPlaces(places, Decimal.ROUND_UP);

/** Fixed number of places, for prices ("10.50"). */
export const formatFixed = (value: Decimal.Value | { toString(): string }, places: number): string =>
  toMoney(value).toFixed(places);

/** Shortest exact form without exponent or trailing zeros, for computed amounts and rates ("0.0000105"). */
export const formatPlain = (value: Decimal.Value | { toString(): string }): string => {
  const d = toMoney(value);
  return d.isZero() ? '0' : d.toFixed();
};
