// Reading a mined Uniswap V2 swap from its receipt's logs (pure): what reached the hot wallet, the pool's fee in the
// output currency, and receipts that are not one swap of ours.
import { encodeAbiParameters, pad, type Address, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { SWAP_TOPIC } from '../../src/autoswap/venues/uniswap-v2/abi.ts';
import { poolFeeOf, readFill } from '../../src/autoswap/venues/uniswap-v2/fill.ts';
import { TRANSFER_TOPIC } from '../../src/chains/evm/adapter.ts';
import type { RpcLog } from '../../src/chains/evm/rpc.ts';

const HOT: Address = '0x5A34e152Af9386B21090B86B1cb8F2b2685670E0';
const PAIR: Address = '0x1111111111111111111111111111111111111111';
const ROUTER: Address = '0x2222222222222222222222222222222222222222';
const TOKEN: Address = '0x3333333333333333333333333333333333333333';
const OTHER: Address = '0x4444444444444444444444444444444444444444';

const log = (address: Address, topics: Hex[], data: Hex): RpcLog => ({ address, topics, data, logIndex: '0x0', transactionHash: '0x00', blockHash: '0x00' });
const topic = (a: Address) => pad(a, { size: 32 }) as Hex;
const swap = (out: bigint, to: Address = HOT) =>
  log(PAIR, [SWAP_TOPIC, topic(ROUTER), topic(to)], encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [10n ** 18n, 0n, 0n, out]));
const transfer = (token: Address, from: Address, to: Address, units: bigint) => log(token, [TRANSFER_TOPIC, topic(from), topic(to)], encodeAbiParameters([{ type: 'uint256' }], [units]));

describe('a mined Uniswap V2 swap, read from its receipt', () => {
  it('is what the to-token transferred from the pair to the hot wallet, with the 0.3% pool fee in that token', () => {
    const logs = [transfer(OTHER, ROUTER, PAIR, 10n ** 18n), transfer(TOKEN, PAIR, HOT, 3_456_789_012n), swap(3_456_789_012n)];
    expect(readFill(logs, { hotWallet: HOT, toToken: TOKEN })).toEqual({ pair: PAIR, received: 3_456_789_012n, poolFee: 10_401_571n });
    // 3 / 997 of the output, rounded down: 0.3% of the input at the price the other 99.7% got.
    expect(poolFeeOf(997n)).toBe(3n);
    expect(poolFeeOf(996n)).toBe(2n);
  });

  it('refuses a receipt that is not exactly one swap paying the hot wallet, or whose transfers do not match it', () => {
    expect(() => readFill([transfer(TOKEN, PAIR, HOT, 5n)], { hotWallet: HOT, toToken: TOKEN })).toThrow(/0 Swap logs/);
    expect(() => readFill([swap(5n, OTHER), transfer(TOKEN, PAIR, OTHER, 5n)], { hotWallet: HOT, toToken: TOKEN })).toThrow(/0 Swap logs/);
    expect(() => readFill([swap(5n), swap(5n), transfer(TOKEN, PAIR, HOT, 5n)], { hotWallet: HOT, toToken: TOKEN })).toThrow(/2 Swap logs/);
    expect(() => readFill([swap(5n), transfer(OTHER, PAIR, HOT, 5n)], { hotWallet: HOT, toToken: TOKEN })).toThrow(/do not match its Swap log/);
    expect(() => readFill([swap(5n), transfer(TOKEN, PAIR, HOT, 6n)], { hotWallet: HOT, toToken: TOKEN })).toThrow(/do not match its Swap log/);
    // A token taking a fee on transfer delivers less than the pair sent: what arrived counts.
    expect(readFill([swap(100n), transfer(TOKEN, PAIR, HOT, 98n)], { hotWallet: HOT, toToken: TOKEN }).received).toBe(98n);
  });
});
