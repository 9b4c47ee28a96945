import { Decimal } from 'decimal.js';

// Our own Decimal constructor: enough precision for 38-digit amounts and never exponent notation in output.
export const Money = Decimal.clone({ precision: 60, toExpNeg: -60, toExpPos: 60 });
export type Money = Decimal;

/** Digits of a `Decimal(38,18)` column: 20 before the point, 18 after. Every stored amount fits it. */
export const AMOUNT_COLUMN = { integerDigits: 20, scale: 18 } as const;

/**
 * The largest single amount the service takes from a client: an item price, an invoice total, the amount an invoice
 * asks for, a sandbox transfer, a withdrawal (docs/money.md, "Limits").
 */
export const MAX_AMOUNT = new Money('1e15');

/**
 * The largest running balance (company, asset, account) and the largest total paid to one invoice: a credit that
 * would take one past it is refused. With single amounts at most MAX_AMOUNT, no reachable sum comes near the
 * columns' 10^20 (docs/money.md, "Limits").
 */
export const MAX_BALANCE = new Money('1e18');

/** Where a parsed decimal must land: digits before and after the point (a database column's shape). */
export interface DecimalShape {
  integerDigits: number;
  scale: number;
}

// Longer texts are never needed for a Decimal(38,18) value and cost time to read; exponents beyond this
// size are out of every column's range whatever the digits say.
const MAX_TEXT_LENGTH = 100;
const MAX_EXPONENT_DIGITS = 4;
const DECIMAL_LITERAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export type DecimalReading = { ok: true; value: Decimal } | { ok: false; message: string };

/**
 * The one decimal parser of the project (request bodies, GraphQL, config and files): exact (no float on the
 * way), bounded before any arithmetic (text length, exponent size), then checked against the column it is
 * stored in, so a value that passes is cheap to compute with and always fits.
 */
export function readDecimal(text: string, shape: DecimalShape = AMOUNT_COLUMN): DecimalReading {
  const trimmed = text.trim();
  if (trimmed.length > MAX_TEXT_LENGTH) return { ok: false, message: `must be a decimal number of at most ${MAX_TEXT_LENGTH} characters` };
  const m = DECIMAL_LITERAL.exec(trimmed);
  if (!m) return { ok: false, message: 'must be a decimal number' };
  const exponent = m[3]?.replace(/^[eE][+-]?0*/, '') ?? '';
  if (exponent.length > MAX_EXPONENT_DIGITS) return { ok: false, message: 'has an exponent out of range' };
  const value = new Money(trimmed);
  if (!value.isFinite()) return { ok: false, message: 'must be a decimal number' };
  const problem = columnProblem(value, shape);
  if (problem) return { ok: false, message: problem };
  // -0 is 0 for every purpose of ours.
  return { ok: true, value: value.isZero() ? new Money(0) : value };
}

/** Why a value does not fit a column, or null. */
function columnProblem(value: Decimal, shape: DecimalShape): string | null {
  if (value.abs().gte(new Money(10).pow(shape.integerDigits))) return `must have at most ${shape.integerDigits} digits before the decimal point`;
  if (value.decimalPlaces() > shape.scale) return `must have at most ${shape.scale} decimal places`;
  return null;
}

/** Whether a computed value fits a column (a quote of a huge total at a tiny price may not). */
export const fitsColumn = (value: Decimal, shape: DecimalShape = AMOUNT_COLUMN): boolean => columnProblem(value, shape) === null;

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
