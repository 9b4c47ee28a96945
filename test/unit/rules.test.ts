import { describe, expect, it } from 'vitest';
import { Money, formatFixed, formatPlain, roundPrice, roundUpToUnit } from '../../src/domain/money.ts';
import { ValidationError } from '../../src/errors/app-error.ts';
import { DecimalLiteral, parseJsonExact } from '../../src/core/json.ts';
import { createInvoiceSchema, expiryFor, proceedInvoiceSchema, quotePayment } from '../../src/invoices/rules.ts';
import { defaultFeeTable } from '../../src/pricing/fees.ts';
import { StaticRateSource } from '../../src/pricing/rates.ts';
import { parseInput } from '../../src/core/validation.ts';

describe('price rounding', () => {
  it('rounds half away from zero to the given places', () => {
    const cases: [string, number, string][] = [
      ['1.005', 2, '1.01'],
      ['1.004999', 2, '1.00'],
      ['-1.005', 2, '-1.01'],
      ['-0.004', 2, '0.00'],
      ['2.00005', 4, '2.0001'],
      ['0.0000005', 6, '0.000001'],
      ['1.123456785', 8, '1.12345679'],
      ['99999999999999.995', 2, '100000000000000.00'],
    ];
    for (const [input, places, expected] of cases) expect(formatFixed(roundPrice(new Money(input), places), places), input).toBe(expected);
  });

  it('rounds client amounts up to the chain unit, never down', () => {
    expect(roundUpToUnit(new Money('0.000000001'), 8).toFixed()).toBe('0.00000001');
    expect(roundUpToUnit(new Money('1.00000000'), 8).toFixed()).toBe('1');
    expect(roundUpToUnit(new Money('1.000000010000000001'), 8).toFixed()).toBe('1.00000002');
  });

  it('prints computed amounts without exponent or trailing zeros', () => {
    expect(formatPlain(new Money('0.00000001'))).toBe('0.00000001');
    expect(formatPlain(new Money('1.50'))).toBe('1.5');
    expect(formatPlain(new Money('0'))).toBe('0');
    expect(formatPlain({ toString: () => '1e-8' })).toBe('0.00000001');
  });
});

describe('exact JSON numbers', () => {
  it('keeps non-integer numbers as their source text', () => {
    const parsed = parseJsonExact('{"a":1.005,"b":12,"c":12345678901234567890,"d":"1.5","e":1e2}') as Record<string, unknown>;
    expect(parsed['a']).toEqual(new DecimalLiteral('1.005'));
    expect(parsed['b']).toBe(12);
    expect(parsed['c']).toEqual(new DecimalLiteral('12345678901234567890'));
    expect(parsed['d']).toBe('1.5');
    expect(parsed['e']).toEqual(new DecimalLiteral('1e2'));
  });
  it('throws on malformed JSON', () => {
    expect(() => parseJsonExact('{"a":')).toThrow();
  });
});

describe('createInvoiceSchema', () => {
  const parse = (input: unknown) => parseInput(createInvoiceSchema, input);

  it('computes the total from rounded prices', () => {
    const out = parse({ invoiceCurrency: 'usd', items: [{ name: ' A ', price: new DecimalLiteral('0.005') }, { name: 'B', price: '0.004' }] });
    expect(out.total.toFixed()).toBe('0.01');
    expect(out.items.map((i) => [i.name, i.price.toFixed()])).toEqual([['A', '0.01'], ['B', '0']]);
    expect(out.isMerchantPaysFee).toBeNull();
    expect(out.paymentCurrency).toBeNull();
    expect(out.redirectURL).toBeNull();
  });

  it('reports each invalid field with its path', () => {
    try {
      parse({ invoiceCurrency: 'USD', items: [{ name: 'a', price: true }], redirectURL: 'https://user:pw@x.example/' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).details.map((d) => d.path)).toEqual(['invoiceCurrency', 'items.0.price', 'redirectURL']);
    }
  });

  it('takes a known client currency or none (the invoice decides whether it is needed)', () => {
    expect(proceedInvoiceSchema.parse({ clientEmail: 'a@b.co' })).toEqual({ clientEmail: 'a@b.co', paymentCurrency: null, lang: null });
    expect(proceedInvoiceSchema.safeParse({ clientEmail: 'a@b.co', paymentCurrency: 'doge' }).success).toBe(false);
    // The e-mails' language: one the checkout page offers, or none (Accept-Language then decides).
    expect(proceedInvoiceSchema.parse({ clientEmail: 'a@b.co', lang: 'de' }).lang).toBe('de');
    expect(proceedInvoiceSchema.safeParse({ clientEmail: 'a@b.co', lang: 'fr' }).success).toBe(false);
    expect(proceedInvoiceSchema.safeParse({ clientEmail: 'a@b' }).success).toBe(false);
  });
});

describe('payment quote', () => {
  it('converts, adds the fee unless the merchant pays it, rounding up to the chain unit', async () => {
    const rate = await new StaticRateSource().rate('usd', 'btc');
    expect(rate.toFixed()).toBe('0.000010526315789474');
    const fee = defaultFeeTable().btc;
    const client = quotePayment({ total: new Money('100'), rate, fee, paymentCurrency: 'btc', isMerchantPaysFee: false });
    // 100 x 0.000010526315789474 = 0.0010526315789474 -> 0.00105264 (8 places, up); fee 1% -> 0.0000105264 -> 0.00001053
    expect(client.converted.toFixed()).toBe('0.00105264');
    expect(client.invoiceFee.toFixed()).toBe('0.00001053');
    expect(client.paymentAmount.toFixed()).toBe('0.00106317');
    const merchant = quotePayment({ total: new Money('100'), rate, fee, paymentCurrency: 'btc', isMerchantPaysFee: true });
    expect(merchant.paymentAmount.toFixed()).toBe('0.00105264');
    expect(merchant.invoiceFee.toFixed()).toBe('0.00001053');
  });

  it('applies a fixed fee part', () => {
    const q = quotePayment({
      total: new Money('10'),
      rate: new Money('1'),
      fee: { percent: new Money('0.5'), fixed: new Money('1') },
      paymentCurrency: 'trc20usdt',
      isMerchantPaysFee: false,
    });
    expect(q.invoiceFee.toFixed()).toBe('1.05');
    expect(q.paymentAmount.toFixed()).toBe('11.05');
  });

  it('expires after 30 minutes, 120 for BTC', () => {
    const t0 = new Date('2026-01-01T00:00:00.000Z');
    expect(expiryFor('eth', t0).toISOString()).toBe('2026-01-01T00:30:00.000Z');
    expect(expiryFor('btc', t0).toISOString()).toBe('2026-01-01T02:00:00.000Z');
  });
});
