// The live price sources: exchanges' public tickers through ccxt, CoinGecko's simple/price, and the static table.
// Each answers one list of quotes per refresh or throws; the refresher (service.ts) keeps them apart.
import fs from 'node:fs';
import type { Decimal } from 'decimal.js';
import { DecimalLiteral, parseJsonExact } from '../../core/json.ts';
import { Money } from '../../domain/money.ts';
import type { SourceQuote } from './aggregate.ts';
import type { ExchangeSource, RateSourceConfig } from './config.ts';

/** Every asset a rate may need a USD price of: the invoice currencies and the payment assets. */
export const PRICED_ASSETS = ['btc', 'eth', 'usdt', 'usdc', 'sol', 'ton', 'bnb', 'bch', 'ltc', 'trx', 'eur'] as const;

export interface PriceSource {
  readonly name: string;
  /** Loads what the source needs before its first fetch (outside the fetch's deadline). */
  prepare?(): Promise<void>;
  fetch(timeoutMs: number): Promise<SourceQuote[]>;
}

/** A number from an answer, as a Decimal; anything else (null, text, NaN) becomes NaN, which the aggregation drops. */
export const toPrice = (value: unknown): Decimal => {
  if (value instanceof DecimalLiteral) return new Money(value.text);
  if (typeof value === 'number' && Number.isFinite(value)) return new Money(String(value));
  if (typeof value === 'string' && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value.trim())) return new Money(value.trim());
  return new Money(NaN);
};

/** Rewrites every URL of ccxt's `urls.api` (a string or a nested object of them) onto `base`, keeping each path. */
export function rebaseUrls(api: unknown, base: string): unknown {
  if (typeof api === 'string') {
    const path = new URL(api).pathname.replace(/\/$/, '');
    return base.replace(/\/$/, '') + path;
  }
  if (api && typeof api === 'object') return Object.fromEntries(Object.entries(api).map(([k, v]) => [k, rebaseUrls(v, base)]));
  return api;
}

/** Which market prices an asset on an exchange: its USD market first, then the stablecoins', then EUR's. */
export function chooseMarkets(symbols: Set<string>): { asset: string; symbol: string; quote: string }[] {
  const out: { asset: string; symbol: string; quote: string }[] = [];
  for (const asset of PRICED_ASSETS) {
    const base = asset.toUpperCase();
    for (const quote of asset === 'eur' ? ['USD'] : ['USD', 'USDT', 'USDC', 'EUR']) {
      if (base === quote) continue;
      const symbol = `${base}/${quote}`;
      if (symbols.has(symbol)) {
        out.push({ asset, symbol, quote: quote.toLowerCase() });
        break;
      }
    }
  }
  // Without an EUR/USD market, one asset priced in both USD and EUR gives the exchange's EUR price (aggregate.ts).
  if (!out.some((m) => m.asset === 'eur')) {
    const both = ['BTC', 'ETH', 'USDT'].find((b) => symbols.has(`${b}/EUR`) && out.some((m) => m.symbol === `${b}/USD`));
    if (both) out.push({ asset: both.toLowerCase(), symbol: `${both}/EUR`, quote: 'eur' });
  }
  return out;
}

interface CcxtExchange {
  urls: { api: unknown };
  timeout: number;
  markets?: Record<string, unknown>;
  loadMarkets(): Promise<Record<string, unknown>>;
  setMarkets(markets: Record<string, unknown>): unknown;
  fetchTicker(symbol: string): Promise<{ last?: number | null; close?: number | null }>;
}

/** ccxt is large (~2 s to load): only a configuration that names an exchange loads it, once. */
let ccxtModule: Promise<Record<string, new (options: object) => CcxtExchange>> | null = null;
const loadCcxt = () => (ccxtModule ??= import('ccxt').then((m) => (m.default ?? m) as unknown as Record<string, new (options: object) => CcxtExchange>));

export class ExchangeTickerSource implements PriceSource {
  private exchange: CcxtExchange | null = null;
  private markets: { asset: string; symbol: string; quote: string }[] | null = null;
  constructor(
    readonly name: ExchangeSource,
    private readonly options: { url?: string; marketsFile?: string },
  ) {}

  async prepare(): Promise<void> {
    await loadCcxt();
  }

  private async open(timeoutMs: number): Promise<CcxtExchange> {
    if (!this.exchange) {
      const ccxt = await loadCcxt();
      const exchange = new ccxt[this.name]!({ enableRateLimit: false });
      if (this.options.url) exchange.urls.api = rebaseUrls(exchange.urls.api, this.options.url);
      if (this.options.marketsFile) exchange.setMarkets(JSON.parse(fs.readFileSync(this.options.marketsFile, 'utf8')) as Record<string, unknown>);
      this.exchange = exchange;
    }
    this.exchange.timeout = timeoutMs;
    return this.exchange;
  }

  async fetch(timeoutMs: number): Promise<SourceQuote[]> {
    const exchange = await this.open(timeoutMs);
    if (!this.markets) this.markets = chooseMarkets(new Set(Object.keys(await exchange.loadMarkets())));
    const settled = await Promise.allSettled(
      this.markets.map(async (m) => {
        const ticker = await exchange.fetchTicker(m.symbol);
        const price = toPrice(ticker.last ?? ticker.close);
        // An answer without a price (ccxt reads an unparsable body as empty) is a failed market, not a price.
        if (price.isNaN()) throw new Error(`${this.name} answered no price for ${m.symbol}`);
        return { source: this.name, base: m.asset, quote: m.quote, market: m.symbol, price, fetchedAt: new Date() } satisfies SourceQuote;
      }),
    );
    const quotes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    if (quotes.length === 0) {
      const first = settled.find((s) => s.status === 'rejected');
      throw first ? (first.reason as Error) : new Error('the exchange lists none of the markets priced here');
    }
    return quotes;
  }
}

/** CoinGecko's ids of the priced assets. */
export const COINGECKO_IDS: Record<string, string> = {
  bitcoin: 'btc',
  ethereum: 'eth',
  tether: 'usdt',
  'usd-coin': 'usdc',
  solana: 'sol',
  'the-open-network': 'ton',
  binancecoin: 'bnb',
  'bitcoin-cash': 'bch',
  litecoin: 'ltc',
  tron: 'trx',
};

export class CoinGeckoSource implements PriceSource {
  readonly name = 'coingecko';
  private readonly apiKey: string | null;
  constructor(private readonly options: { url?: string; apiKeyFile?: string; plan?: 'demo' | 'pro' }) {
    this.apiKey = options.apiKeyFile ? fs.readFileSync(options.apiKeyFile, 'utf8').trim() : null;
  }

  async fetch(timeoutMs: number): Promise<SourceQuote[]> {
    const base = (this.options.url ?? (this.options.plan === 'pro' ? 'https://pro-api.coingecko.com' : 'https://api.coingecko.com')).replace(/\/$/, '');
    const url = `${base}/api/v3/simple/price?ids=${Object.keys(COINGECKO_IDS).join(',')}&vs_currencies=usd,eur`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey) headers[this.options.plan === 'pro' ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'] = this.apiKey;
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    const text = await response.text();
    if (!response.ok) throw new Error(`coingecko answered HTTP ${response.status}`);
    const body = parseJsonExact(text);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('coingecko answered something other than a JSON object');
    const fetchedAt = new Date();
    const quotes: SourceQuote[] = [];
    for (const [id, asset] of Object.entries(COINGECKO_IDS)) {
      const prices = (body as Record<string, unknown>)[id];
      if (!prices || typeof prices !== 'object') continue;
      for (const vs of ['usd', 'eur']) {
        const value = (prices as Record<string, unknown>)[vs];
        if (value !== undefined) quotes.push({ source: this.name, base: asset, quote: vs, market: `${id}.${vs}`, price: toPrice(value), fetchedAt });
      }
    }
    if (quotes.length === 0) throw new Error('coingecko answered no price of the ids asked for');
    return quotes;
  }
}

/** The RATES_FILE table (or the built-in one) as a source: always fresh, the same every time. */
export class StaticTableSource implements PriceSource {
  readonly name = 'static';
  constructor(private readonly usdPrices: ReadonlyMap<string, Decimal>) {}
  /** Its prices without waiting (the refresher has them from its start). */
  quotesNow(fetchedAt: Date): SourceQuote[] {
    return [...this.usdPrices].filter(([asset]) => asset !== 'usd').map(([asset, price]) => ({ source: this.name, base: asset, quote: 'usd', market: 'RATES_FILE', price, fetchedAt }));
  }
  fetch(): Promise<SourceQuote[]> {
    return Promise.resolve(this.quotesNow(new Date()));
  }
}

export function buildSource(config: RateSourceConfig, staticPrices: ReadonlyMap<string, Decimal>): PriceSource {
  switch (config.source) {
    case 'coingecko':
      return new CoinGeckoSource(config);
    case 'static':
      return new StaticTableSource(staticPrices);
    default:
      return new ExchangeTickerSource(config.source, config);
  }
}
