// RATES_CONFIG: the JSON file that names the live rate sources and the aggregation's rules (docs/rates.md).
// Read and checked at start; every problem is named with its path in the file.
import fs from 'node:fs';
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { decimal, httpUrl, readConfigFile } from '../../core/validation.ts';

/** Exchanges reached through ccxt's public tickers. */
export const EXCHANGE_SOURCES = ['kraken', 'bitstamp', 'coinbase', 'binance'] as const;
export type ExchangeSource = (typeof EXCHANGE_SOURCES)[number];
export const SOURCE_NAMES = [...EXCHANGE_SOURCES, 'coingecko', 'static'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

const path = z.string().min(1).max(4096);

const exchangeSource = z
  .object({
    source: z.enum(EXCHANGE_SOURCES),
    /** Replaces the exchange's API base URL (scheme, host and port; paths unchanged): a proxy, or a test server. */
    url: httpUrl.optional(),
    /** ccxt's unified markets of the exchange (as `exchange.markets`), used instead of loading them. */
    marketsFile: path.optional(),
  })
  .strict();

const coingeckoSource = z
  .object({
    source: z.literal('coingecko'),
    url: httpUrl.optional(),
    /** A file holding the API key (sent as a header; never logged). */
    apiKeyFile: path.optional(),
    /** Which key header the key is sent in: the demo plan's (default) or the paid plan's. */
    plan: z.enum(['demo', 'pro']).optional(),
  })
  .strict();

const staticSource = z.object({ source: z.literal('static') }).strict();

const seconds = (min: number, max: number, fallback: number) => z.number().int().min(min).max(max).default(fallback);

export const ratesConfigSchema = z
  .object({
    sources: z.array(z.discriminatedUnion('source', [exchangeSource, coingeckoSource, staticSource])).min(1).max(12),
    refreshSeconds: seconds(1, 3600, 30),
    maxAgeSeconds: seconds(2, 86_400, 120),
    /** How long one source may take to answer one refresh. */
    timeoutSeconds: seconds(1, 60, 5),
    minSources: z.number().int().min(1).max(12).default(2),
    maxDeviationPercent: decimal({ min: 0, max: 100 }).default(() => decimalDefault('3')),
    spreadPercent: decimal({ min: 0, max: 50 }).default(() => decimalDefault('0')),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.sources.forEach((s, i) => {
      if (seen.has(s.source)) ctx.addIssue({ code: 'custom', path: ['sources', i, 'source'], message: `${s.source} is named twice` });
      seen.add(s.source);
      for (const key of ['marketsFile', 'apiKeyFile'] as const) {
        const file = (s as Record<string, unknown>)[key];
        if (typeof file === 'string' && !readable(file)) ctx.addIssue({ code: 'custom', path: ['sources', i, key], message: `cannot read ${file}` });
      }
    });
    if (config.minSources > config.sources.length) {
      ctx.addIssue({ code: 'custom', path: ['minSources'], message: `is ${config.minSources} but only ${config.sources.length} sources are named` });
    }
    if (config.maxAgeSeconds <= config.refreshSeconds) {
      ctx.addIssue({ code: 'custom', path: ['maxAgeSeconds'], message: `must be more than refreshSeconds (${config.refreshSeconds}): a price would expire before the next refresh` });
    }
    if (config.timeoutSeconds >= config.refreshSeconds && config.refreshSeconds > 1) {
      ctx.addIssue({ code: 'custom', path: ['timeoutSeconds'], message: `must be less than refreshSeconds (${config.refreshSeconds})` });
    }
  });

// The schema's own parser makes the defaults Decimals like the values read from the file.
const decimalDefault = (text: string): Decimal => decimal().parse(text) as Decimal;

const readable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};

export type RatesConfig = z.output<typeof ratesConfigSchema>;
export type RateSourceConfig = RatesConfig['sources'][number];

/** Reads and checks RATES_CONFIG; throws one error naming every problem (`file: path: message; ...`). */
export const loadRatesConfig = (file: string): RatesConfig => readConfigFile(ratesConfigSchema, file);
