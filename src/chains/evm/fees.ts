// EVM fees, pure (docs/chains-evm.md): EIP-1559 where the chain has a base fee, a legacy gas price where it has none.
// The node suggests, the configuration caps; a stuck transaction is replaced with fees raised by a quarter (nodes
// take a replacement only when both fees rise by at least a tenth).
import type { Decimal } from 'decimal.js';
import { toBaseUnits } from '../units.ts';

export type Fees = { type: 'eip1559'; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 'legacy'; gasPrice: bigint };

export interface FeeSuggestion {
  /** The latest block's base fee; null on a chain without EIP-1559. */
  baseFee: bigint | null;
  /** eth_maxPriorityFeePerGas (EIP-1559) or eth_gasPrice (legacy). */
  suggested: bigint;
}

export interface FeeCaps {
  /** The most per gas, in wei: maxFeePerGas (EIP-1559) or gasPrice (legacy). */
  maxFee: bigint | null;
  /** The most tip per gas, in wei. */
  priorityFee: bigint | null;
}

const min = (a: bigint, b: bigint | null) => (b !== null && b < a ? b : a);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** What a new transaction offers: a tip as suggested, and room for the base fee to double, within the caps. */
export function chooseFees(suggestion: FeeSuggestion, caps: FeeCaps): Fees {
  if (suggestion.baseFee === null) return { type: 'legacy', gasPrice: min(suggestion.suggested, caps.maxFee) };
  const maxFeePerGas = min(2n * suggestion.baseFee + min(suggestion.suggested, caps.priorityFee), caps.maxFee);
  return { type: 'eip1559', maxFeePerGas, maxPriorityFeePerGas: min(min(suggestion.suggested, caps.priorityFee), maxFeePerGas) };
}

/** A quarter more, rounded up. */
const bumped = (fee: bigint) => (fee * 5n + 3n) / 4n;
/** What a node takes as a replacement: at least a tenth more, rounded up. */
const replaceable = (fee: bigint, old: bigint) => fee * 10n >= old * 11n;

/**
 * The fees of a replacement for a transaction that offered `old`: a quarter more, or what a new one would offer now
 * if that is more, within the caps. Null when the caps leave no room for a replacement nodes would take.
 */
export function replacementFees(old: Fees, now: Fees, caps: FeeCaps): Fees | null {
  if (old.type === 'legacy') {
    const gasPrice = min(max(bumped(old.gasPrice), now.type === 'legacy' ? now.gasPrice : now.maxFeePerGas), caps.maxFee);
    return replaceable(gasPrice, old.gasPrice) ? { type: 'legacy', gasPrice } : null;
  }
  const nowMax = now.type === 'eip1559' ? now.maxFeePerGas : now.gasPrice;
  const nowTip = now.type === 'eip1559' ? now.maxPriorityFeePerGas : now.gasPrice;
  const maxFeePerGas = min(max(bumped(old.maxFeePerGas), nowMax), caps.maxFee);
  // The tip rises with the replacement even past its own cap: nodes refuse a replacement whose tip did not.
  const maxPriorityFeePerGas = min(max(bumped(old.maxPriorityFeePerGas), nowTip), maxFeePerGas);
  if (!replaceable(maxFeePerGas, old.maxFeePerGas) || !replaceable(maxPriorityFeePerGas, old.maxPriorityFeePerGas)) return null;
  return { type: 'eip1559', maxFeePerGas, maxPriorityFeePerGas };
}

/** The most a transaction of `gas` can cost with `fees`: what its sender must hold beyond the value. */
export const maxCost = (fees: Fees, gas: bigint): bigint => gas * (fees.type === 'eip1559' ? fees.maxFeePerGas : fees.gasPrice);

/** A gwei amount of the configuration in wei; null when not set. Throws below one wei (nothing is rounded). */
export const gweiToWei = (gwei: Decimal | undefined): bigint | null => (gwei === undefined ? null : toBaseUnits(gwei, 9));
