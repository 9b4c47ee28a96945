// The EVM adapter's pure parts: fees within caps and their replacement, and what consolidation does next with one
// deposit address.
import { describe, expect, it } from 'vitest';
import { chooseFees, gweiToWei, maxCost, replacementFees, type Fees } from '../../src/chains/evm/fees.ts';
import { TRANSFER_GAS } from '../../src/chains/evm/sender.ts';
import { sweepStep } from '../../src/chains/evm/sweeps.ts';
import { Money } from '../../src/domain/money.ts';

const gwei = (n: number | string) => gweiToWei(new Money(n))!;
const noCaps = { maxFee: null, priorityFee: null };

describe('fees', () => {
  it('offers the suggested tip and room for the base fee to double; a legacy gas price where there is no base fee', () => {
    expect(chooseFees({ baseFee: gwei(10), suggested: gwei(2) }, noCaps)).toEqual({ type: 'eip1559', maxFeePerGas: gwei(22), maxPriorityFeePerGas: gwei(2) });
    expect(chooseFees({ baseFee: null, suggested: gwei(5) }, noCaps)).toEqual({ type: 'legacy', gasPrice: gwei(5) });
  });

  it('keeps within the caps: the tip to its cap, the total to its cap, and the tip never above the total', () => {
    expect(chooseFees({ baseFee: gwei(10), suggested: gwei(2) }, { maxFee: gwei(15), priorityFee: gwei(1) })).toEqual({
      type: 'eip1559',
      maxFeePerGas: gwei(15),
      maxPriorityFeePerGas: gwei(1),
    });
    expect(chooseFees({ baseFee: gwei(10), suggested: gwei(50) }, { maxFee: gwei(30), priorityFee: null })).toEqual({
      type: 'eip1559',
      maxFeePerGas: gwei(30),
      maxPriorityFeePerGas: gwei(30),
    });
    expect(chooseFees({ baseFee: null, suggested: gwei(50) }, { maxFee: gwei(30), priorityFee: null })).toEqual({ type: 'legacy', gasPrice: gwei(30) });
  });

  it('replaces with a quarter more (rounded up), or what is asked now if more; refuses when the cap leaves less than the tenth nodes want', () => {
    const old: Fees = { type: 'eip1559', maxFeePerGas: 101n, maxPriorityFeePerGas: 3n };
    expect(replacementFees(old, { type: 'eip1559', maxFeePerGas: 50n, maxPriorityFeePerGas: 1n }, noCaps)).toEqual({
      type: 'eip1559',
      maxFeePerGas: 127n,
      maxPriorityFeePerGas: 4n,
    });
    expect(replacementFees(old, { type: 'eip1559', maxFeePerGas: 500n, maxPriorityFeePerGas: 9n }, noCaps)).toEqual({
      type: 'eip1559',
      maxFeePerGas: 500n,
      maxPriorityFeePerGas: 9n,
    });
    // A cap that allows exactly a tenth more is enough; below that nothing is replaced.
    expect(replacementFees({ type: 'eip1559', maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, old, { maxFee: 110n, priorityFee: null })).toEqual({
      type: 'eip1559',
      maxFeePerGas: 110n,
      maxPriorityFeePerGas: 13n,
    });
    expect(replacementFees({ type: 'eip1559', maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, old, { maxFee: 109n, priorityFee: null })).toBeNull();
    // A tip already at the total cannot rise with it.
    expect(replacementFees({ type: 'eip1559', maxFeePerGas: 100n, maxPriorityFeePerGas: 100n }, old, { maxFee: 105n, priorityFee: null })).toBeNull();
    expect(replacementFees({ type: 'legacy', gasPrice: 100n }, { type: 'legacy', gasPrice: 90n }, noCaps)).toEqual({ type: 'legacy', gasPrice: 125n });
    expect(replacementFees({ type: 'legacy', gasPrice: 100n }, { type: 'legacy', gasPrice: 90n }, { maxFee: 100n, priorityFee: null })).toBeNull();
  });

  it('reads gwei exactly, refuses anything below one wei, and prices the most a transaction can cost', () => {
    expect(gweiToWei(new Money('1.000000001'))).toBe(1_000_000_001n);
    expect(gweiToWei(undefined)).toBeNull();
    expect(() => gweiToWei(new Money('0.0000000001'))).toThrow(/more than 9 decimal places/);
    expect(maxCost({ type: 'eip1559', maxFeePerGas: gwei(20), maxPriorityFeePerGas: gwei(1) }, TRANSFER_GAS)).toBe(420_000n * 10n ** 9n);
    expect(maxCost({ type: 'legacy', gasPrice: 7n }, 3n)).toBe(21n);
  });
});

describe('the next consolidation step of a deposit address', () => {
  const fees: Fees = { type: 'eip1559', maxFeePerGas: 10n, maxPriorityFeePerGas: 1n };
  const fee = 10n * TRANSFER_GAS;
  const token = (units: bigint) => [{ asset: 'usdterc20' as const, units, gas: 60_000n }];

  it('moves tokens first: with the gas their transfer may cost at hand, else a top-up of what is missing', () => {
    expect(sweepStep({ tokens: token(5n), nativeUnswept: 0n, nativeSafe: 0n, nativeNow: 0n, fees })).toEqual({ kind: 'topup', asset: 'usdterc20', units: 600_000n });
    expect(sweepStep({ tokens: token(5n), nativeUnswept: 0n, nativeSafe: 0n, nativeNow: 200_000n, fees })).toEqual({ kind: 'topup', asset: 'usdterc20', units: 400_000n });
    expect(sweepStep({ tokens: token(5n), nativeUnswept: 0n, nativeSafe: 600_000n, nativeNow: 600_000n, fees })).toEqual({ kind: 'token', asset: 'usdterc20', units: 5n });
  });

  it('moves native coins less their fee, no more than credited nor than held at both depths, only when worth ten fees', () => {
    const native = (nativeUnswept: bigint, nativeSafe: bigint, nativeNow: bigint) => sweepStep({ tokens: [], nativeUnswept, nativeSafe, nativeNow, fees });
    expect(native(100n * fee, 100n * fee, 100n * fee)).toEqual({ kind: 'native', units: 99n * fee });
    expect(native(50n * fee, 100n * fee, 100n * fee)).toEqual({ kind: 'native', units: 50n * fee });
    // A deposit not yet as deep as a payment needs is not moved early.
    expect(native(100n * fee, 40n * fee, 100n * fee)).toEqual({ kind: 'native', units: 39n * fee });
    expect(native(100n * fee, 100n * fee, 40n * fee)).toEqual({ kind: 'native', units: 39n * fee });
    expect(native(100n * fee, 10n * fee, 100n * fee)).toEqual({ kind: 'none' });
    expect(native(0n, 100n * fee, 100n * fee)).toEqual({ kind: 'none' });
  });
});
