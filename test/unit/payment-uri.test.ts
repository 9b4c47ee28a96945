// The payment URI of each network, as wallets read them (BIP-21, EIP-681, TON transfer links, Solana Pay).
import { describe, expect, it } from 'vitest';
import { paymentUri, qrContent } from '../../src/chains/payment-uri.ts';

describe('payment URIs', () => {
  it('BIP-21 for bitcoin, litecoin and bitcoin cash, amounts in whole coins without trailing zeros', () => {
    expect(paymentUri({ currency: 'btc', address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', tag: null, amount: '0.00123400' })).toBe(
      'bitcoin:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4?amount=0.001234',
    );
    expect(paymentUri({ currency: 'ltc', address: 'ltc1qabc', tag: null, amount: '2.5' })).toBe('litecoin:ltc1qabc?amount=2.5');
    // A CashAddr carries its prefix already: it is not doubled.
    expect(paymentUri({ currency: 'bch', address: 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a', tag: null, amount: '1.00000000' })).toBe(
      'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a?amount=1',
    );
  });

  it('EIP-681: native value in wei on its chain, ERC-20 transfers to the token contract in base units', () => {
    const to = '0x52908400098527886E0F7030069857D2E4169EE7';
    expect(paymentUri({ currency: 'eth', address: to, tag: null, amount: '0.015' })).toBe(`ethereum:${to}@1?value=15000000000000000`);
    expect(paymentUri({ currency: 'bnb', address: to, tag: null, amount: '1' })).toBe(`ethereum:${to}@56?value=1000000000000000000`);
    expect(paymentUri({ currency: 'usdterc20', address: to, tag: null, amount: '12.345678' })).toBe(
      `ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=${to}&uint256=12345678`,
    );
    expect(paymentUri({ currency: 'usdc', address: to, tag: null, amount: '5' })).toBe(
      `ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@1/transfer?address=${to}&uint256=5000000`,
    );
    // Exact at 18 places: no float on the way.
    expect(paymentUri({ currency: 'eth', address: to, tag: null, amount: '123456789.123456789012345678' })).toBe(`ethereum:${to}@1?value=123456789123456789012345678`);
  });

  it('TON transfer links carry the tag as the comment; Solana Pay the amount in SOL; Tron has none (the bare address)', () => {
    const ton = 'EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2';
    expect(paymentUri({ currency: 'ton', address: ton, tag: '48121', amount: '1.5' })).toBe(`ton://transfer/${ton}?amount=1500000000&text=48121`);
    expect(paymentUri({ currency: 'ton', address: ton, tag: 'a b&c', amount: '1' })).toBe(`ton://transfer/${ton}?amount=1000000000&text=a%20b%26c`);
    expect(paymentUri({ currency: 'sol', address: 'HXtBm8XZbxaTt41uqaKhwUAa6Z1aPyvJdsZVENiWsetg', tag: null, amount: '0.5000' })).toBe(
      'solana:HXtBm8XZbxaTt41uqaKhwUAa6Z1aPyvJdsZVENiWsetg?amount=0.5',
    );
    expect(paymentUri({ currency: 'trc20usdt', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', tag: null, amount: '10' })).toBeNull();
    expect(qrContent({ currency: 'trx', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', tag: null, amount: '10' })).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });
});
