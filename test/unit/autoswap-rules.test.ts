// Autoswap's pure rules: the least output a swap may fill at, and the retry delays.
import { describe, expect, it } from 'vitest';
import { entryRate, minimumOutput, retryDelayMs } from '../../src/autoswap/rules.ts';
import { Money } from '../../src/domain/money.ts';

describe('autoswap rules', () => {
  it('fixes the minimum output from the rate less the cap, rounded down to the target unit', () => {
    expect(minimumOutput(new Money('0.01'), new Money('95000'), new Money('1'), 'trc20usdt').toFixed()).toBe('940.5');
    // 1/3 of a unit is cut, never rounded up past the cap.
    expect(minimumOutput(new Money('1'), new Money('0.3333333333'), new Money('0'), 'trc20usdt').toFixed()).toBe('0.333333');
    expect(minimumOutput(new Money('0.00000001'), new Money('0.0001'), new Money('1'), 'btc').toFixed()).toBe('0');
  });

  it('doubles the retry delay from the base, at most an hour, and stops after the attempts', () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, 1000, 5))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(5, 1000, 5)).toBeNull();
    expect(retryDelayMs(30, 60_000, 100)).toBe(3_600_000);
  });

  it('shows the quoted rate before a swap is done, and what the merchant got per unit after', () => {
    expect(entryRate({ amount: '2', toAmount: null, quotedRate: '95000', status: 'submitted' })).toBe('95000');
    expect(entryRate({ amount: '2', toAmount: '189000', quotedRate: '95000', status: 'done' })).toBe('94500');
    expect(entryRate({ amount: '2', toAmount: null, quotedRate: null, status: 'queued' })).toBeNull();
  });
});
