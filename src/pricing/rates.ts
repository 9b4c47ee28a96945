import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { COMPANY_ASSETS, INVOICE_CURRENCIES, PAYMENT_CURRENCY_INFO, type InvoiceCurrency, type PaymentCurrency } from '../domain/assets.ts';
import { Money } from '../domain/money.ts';
import { decimal, readConfigFile } from '../core/validation.ts';

/** Where exchange rates come from. The built-in source is a static table; a live feed can replace it. */
export interface RateSource {
  /** How many units of `to` one unit of `from` buys. */
  rate(from: InvoiceCurrency, to: PaymentCurrency): Promise<Decimal>;
}

/** Places a stored rate keeps (the column is Decimal(38,18)). */
export const RATE_PLACES = 18;

/** Reference USD prices for the built-in table (sandbox/demo values, not market data). */
export const DEFAULT_USD_PRICES: Record<string, string> = {
  usd: '1',
  eur: '1.08',
  usdt: '1',
  usdc: '1',
  btc: '95000',
  eth: '3500',
  ton: '5.5',
  sol: '180',
  bnb: '650',
  bch: '450',
  ltc: '95',
  trx: '0.25',
  near: '5',
};

// Every rate between two prices in this range is a non-zero Decimal(38,18) with 18 places.
const MIN_USD_PRICE = '0.000001';
const MAX_USD_PRICE = '1000000000000';

const priceTableSchema = z.partialRecord(
  z.enum([...new Set<string>([...INVOICE_CURRENCIES, ...COMPANY_ASSETS])] as [string, ...string[]]),
  decimal({ min: MIN_USD_PRICE, max: MAX_USD_PRICE }),
);

/** Rates derived from one USD price per currency; prices from RATES_FILE override the defaults. */
export class StaticRateSource implements RateSource {
  private readonly usd: Map<string, Decimal>;
  constructor(overrides: Record<string, Decimal> = {}) {
    this.usd = new Map(Object.entries(DEFAULT_USD_PRICES).map(([k, v]) => [k, new Money(v)]));
    for (const [k, v] of Object.entries(overrides)) this.usd.set(k, v);
  }
  static fromFile(path: string): StaticRateSource {
    return new StaticRateSource(readConfigFile(priceTableSchema, path) as Record<string, Decimal>);
  }
  async rate(from: InvoiceCurrency, to: PaymentCurrency): Promise<Decimal> {
    const asset = PAYMENT_CURRENCY_INFO[to].asset;
    const fromUsd = this.usd.get(from);
    const toUsd = this.usd.get(asset);
    if (!fromUsd || !toUsd) throw new Error(`no rate for ${from} -> ${to}`);
    return fromUsd.div(toUsd).toDecimalPlaces(RATE_PLACES, Money.ROUND_HALF_EVEN);
  }
}
