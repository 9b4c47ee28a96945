// Amounts on chain are integers of the network's smallest unit (sun, nanoton, lamport); the service counts in units of
// the currency. Both ways are exact: Money, never a float.
import type { Decimal } from 'decimal.js';
import { Money } from '../domain/money.ts';

/** `baseUnits` of the smallest unit as an amount of the currency with `decimals` places. */
export const fromBaseUnits = (baseUnits: bigint, decimals: number): Decimal => new Money(baseUnits.toString()).div(new Money(10).pow(decimals));

/** `amount` in the smallest unit; throws when it has more places than the chain can carry (nothing is rounded away). */
export function toBaseUnits(amount: Decimal, decimals: number): bigint {
  const scaled = new Money(amount).times(new Money(10).pow(decimals));
  if (!scaled.isInteger()) throw new Error(`${amount.toFixed()} has more than ${decimals} decimal places`);
  return BigInt(scaled.toFixed(0));
}
