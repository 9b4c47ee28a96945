import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { COMPANY_ASSETS, INVOICE_CURRENCIES, PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type CompanyAsset, type InvoiceCurrency, type Network, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { Money } from '../domain/money.ts';
import { decimal, readConfigFile } from '../core/validation.ts';
import { crossRate, type AssetPrice, type RateOutcome } from './live/aggregate.ts';
import type { LiveRates, SourceState } from './live/service.ts';

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
  /** The table's USD prices (the `static` live source reads them). */
  get usdPrices(): ReadonlyMap<string, Decimal> {
    return this.usd;
  }
  /** The rate with what it was made of (the table's two prices), like a live quote. */
  quote(from: InvoiceCurrency, to: PaymentCurrency, now: Date): RateOutcome {
    const side = (asset: string): AssetPrice | undefined => {
      const usd = this.usd.get(asset);
      if (!usd) return undefined;
      return { ok: true, asset, usd, dropped: [], updatedAt: now, sources: [{ source: 'static', market: 'RATES_FILE', price: usd.toFixed(), usd: usd.toFixed(), fetchedAt: now }] };
    };
    return crossRate(side(from), side(PAYMENT_CURRENCY_INFO[to].asset), new Money(0), RATE_PLACES, now, 'static');
  }
  async rate(from: InvoiceCurrency, to: PaymentCurrency): Promise<Decimal> {
    const asset = PAYMENT_CURRENCY_INFO[to].asset;
    const fromUsd = this.usd.get(from);
    const toUsd = this.usd.get(asset);
    if (!fromUsd || !toUsd) throw new Error(`no rate for ${from} -> ${to}`);
    return fromUsd.div(toUsd).toDecimalPlaces(RATE_PLACES, Money.ROUND_HALF_EVEN);
  }
}

/** One rate of `GET /api/rates`: what `invoiceCurrency` converts to in `paymentCurrency` now. */
export interface RateListing {
  paymentCurrency: PaymentCurrency;
  rate: Decimal;
  sources: string[];
  updatedAt: Date;
}

export interface RatesState {
  /** Where live-mode rates come from: `live` (RATES_CONFIG) or `none` (live proceed answers 503). */
  live: 'live' | 'none';
  /** Where test-mode rates come from (TEST_MODE_RATES). */
  test: 'static' | 'live';
  sources: SourceState[];
  /** Assets without a good price now, with why. */
  unavailable: { asset: string; reason: string }[];
}

/**
 * The rates of each mode (docs/rates.md, "Modes"): test mode the static table unless TEST_MODE_RATES=live; live mode
 * the aggregated sources of RATES_CONFIG, or none at all (every live quote is unavailable, never a demo price).
 */
export class RateBook {
  constructor(
    private readonly table: StaticRateSource,
    private readonly live: LiveRates | null,
    private readonly testMode: 'static' | 'live',
    private readonly now: () => Date = () => new Date(),
  ) {}

  quote(mode: Mode, from: InvoiceCurrency, to: PaymentCurrency): RateOutcome {
    const useLive = mode === 'live' || this.testMode === 'live';
    if (!useLive) return this.table.quote(from, to, this.now());
    if (!this.live) return { ok: false, currency: to, reason: 'no rate source configured (RATES_CONFIG)' };
    return this.live.quote(from, PAYMENT_CURRENCY_INFO[to].asset, RATE_PLACES);
  }

  /** Every payment currency's rate from `invoiceCurrency` that is available now (the others are left out). */
  list(mode: Mode, invoiceCurrency: InvoiceCurrency): RateListing[] {
    return PAYMENT_CURRENCIES.flatMap((paymentCurrency) => {
      const outcome = this.quote(mode, invoiceCurrency, paymentCurrency);
      if (!outcome.ok) return [];
      const { details, rate } = outcome.quote;
      const used = [...details.from.sources, ...details.to.sources];
      const sources = [...new Set(used.map((s) => s.source))];
      const updatedAt = used.length ? new Date(Math.min(...used.map((s) => s.fetchedAt.getTime()))) : details.computedAt;
      return [{ paymentCurrency, rate, sources, updatedAt }];
    });
  }

  state(): RatesState {
    const unavailable = this.live
      ? [...new Set(PAYMENT_CURRENCIES.map((c) => PAYMENT_CURRENCY_INFO[c].asset))].flatMap((asset) => {
          const p = this.live!.price(asset);
          return p.ok ? [] : [{ asset, reason: p.reason }];
        })
      : [];
    return { live: this.live ? 'live' : 'none', test: this.testMode, sources: this.live?.sourceStates() ?? [], unavailable };
  }
}

/**
 * Readiness of the rates (docs/rates.md, "Operations"): failing when a mode that uses live rates offers currencies and
 * none of them has a good rate (or no source is configured at all); degraded, keeping the traffic, when only some
 * have none; ok otherwise.
 */
export function ratesCheck(book: RateBook, offered: (network: Network, mode: Mode) => boolean) {
  return {
    name: 'rates',
    run: async (): Promise<string | null | { degraded: string }> => {
      const state = book.state();
      const modes: Mode[] = state.test === 'live' ? ['live', 'test'] : ['live'];
      const assets = [...new Set(PAYMENT_CURRENCIES.filter((c) => modes.some((m) => offered(PAYMENT_CURRENCY_INFO[c].network, m))).map((c) => PAYMENT_CURRENCY_INFO[c].asset))];
      if (assets.length === 0) return null;
      if (state.live === 'none') return `no rate source configured (RATES_CONFIG): live proceed in ${assets.join(', ')} answers 503 RATE_UNAVAILABLE`;
      const missing = state.unavailable.filter((u) => assets.includes(u.asset as CompanyAsset));
      if (missing.length === 0) return null;
      const text = `no good rate for ${missing.map((u) => `${u.asset} (${u.reason})`).join(', ')}`;
      return missing.length === assets.length ? text : { degraded: text };
    },
  };
}
