import { describe, expect, it } from 'vitest';
import { encodeAddress, validateAddress } from '../../src/chains/address-formats.ts';
import { parseInput } from '../../src/core/validation.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../src/domain/assets.ts';
import { toMoney } from '../../src/domain/money.ts';
import { itemProblem, MAX_WITHDRAWAL_ITEMS, quoteWithdrawal, totalOf, withdrawRequestSchema } from '../../src/withdrawals/rules.ts';

const FORMAT = { bitcoin: 'btc', litecoin: 'ltc', 'bitcoin-cash': 'bch', ethereum: 'evm', bsc: 'evm', tron: 'tron', solana: 'sol', ton: 'ton' } as const;
const isValid = (asset: PaymentCurrency, address: string) => validateAddress(FORMAT[PAYMENT_CURRENCY_INFO[asset].network], address);

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const EVM = '0x52908400098527886E0F7030069857D2E4169EE7';
const item = (overrides: Record<string, unknown>) => parseInput(withdrawRequestSchema, { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt', ...overrides }] }).items[0]!;

describe('withdrawal rules', () => {
  it('reads amounts exactly and refuses malformed requests as a whole', () => {
    expect(item({ amount: '10.000001' }).amount.toFixed()).toBe('10.000001');
    expect(() => parseInput(withdrawRequestSchema, { items: [] })).toThrow();
    expect(() => parseInput(withdrawRequestSchema, {})).toThrow();
    expect(() => item({ amount: 'ten' })).toThrow();
    expect(() => item({ amount: '-1' })).toThrow();
    expect(() => item({ asset: 'doge' })).toThrow();
    expect(() => item({ to: 42 })).toThrow();
    // Finer than the chain unit (6 places for TRC-20 USDT) is malformed, not a per-item refusal.
    expect(() => item({ amount: '5.0000001' })).toThrow(expect.objectContaining({ details: [{ path: 'items.0.amount', message: 'has more than 6 decimal places, the smallest unit of trc20usdt' }] }));
    const many = Array.from({ length: MAX_WITHDRAWAL_ITEMS + 1 }, () => ({ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }));
    expect(() => parseInput(withdrawRequestSchema, { items: many })).toThrow();
    expect(item({ tag: '' }).tag).toBeNull();
  });

  it('charges the network fee on top of the net amount, per item (rule 2)', () => {
    const q = quoteWithdrawal('trc20usdt', toMoney('10'));
    expect([q.fee.toFixed(), q.total.toFixed(), q.minimum.toFixed()]).toEqual(['1', '11', '5']);
    expect(totalOf([q, quoteWithdrawal('trc20usdt', toMoney('5'))]).toFixed()).toBe('17');
  });

  it('refuses items below the minimum, with a bad address or a missing tag', () => {
    expect(itemProblem(item({ amount: '4.999999' }), isValid)).toBe('Amount is below the minimum withdrawal of 5 trc20usdt');
    expect(itemProblem(item({ amount: '5' }), isValid)).toBeNull();
    expect(itemProblem(item({ to: EVM }), isValid)).toBe('Receiver address is not a valid trc20usdt address');
    expect(itemProblem(item({ to: `${TRON.slice(0, -1)}u` }), isValid)).toBe('Receiver address is not a valid trc20usdt address');
    const ton = encodeAddress('ton', new Uint8Array(32).fill(7));
    expect(itemProblem(item({ asset: 'ton', amount: '1', to: ton }), isValid)).toBe('A tag is required for ton');
    expect(itemProblem(item({ asset: 'ton', amount: '1', to: ton, tag: '42' }), isValid)).toBeNull();
    expect(itemProblem(item({ tag: '123' }), isValid)).toBe('trc20usdt takes no tag; send an empty string');
  });

  it('accepts a valid address of another network with the same format (rule 5)', () => {
    // An Ethereum-format address for a BSC asset, and the same for USDC on Ethereum.
    expect(itemProblem(item({ asset: 'bnb', amount: '0.01', to: EVM }), isValid)).toBeNull();
    expect(itemProblem(item({ asset: 'usdc', amount: '10', to: EVM }), isValid)).toBeNull();
    // TRX and TRC-20 USDT share the Tron format.
    expect(itemProblem(item({ asset: 'trx', amount: '10' }), isValid)).toBeNull();
  });
});
