// An invoice's rate audit (Invoice.rateDetails, written at proceed) as REST, GraphQL and the CSV export show it.
import { SOURCE_NAMES } from './live/config.ts';

export const RATE_SOURCE_NAMES = SOURCE_NAMES;

export interface PresentedRateSource {
  source: (typeof SOURCE_NAMES)[number];
  market: string;
  price: string;
  usdPrice: string;
  fetchedAt: string;
}

export interface PresentedRatePrice {
  asset: string;
  usdPrice: string;
  sources: PresentedRateSource[];
}

export interface PresentedRateDetails {
  kind: 'live' | 'static';
  invoiceCurrency: PresentedRatePrice;
  paymentCurrency: PresentedRatePrice;
  spreadPercent: string;
  computedAt: string;
}

interface StoredSide {
  asset: string;
  usd: string;
  sources: { source: string; market: string; price: string; usd: string; fetchedAt: string }[];
}

const side = (s: StoredSide): PresentedRatePrice => ({
  asset: s.asset,
  usdPrice: s.usd,
  sources: s.sources.map((x) => ({ source: x.source as PresentedRateSource['source'], market: x.market, price: x.price, usdPrice: x.usd, fetchedAt: x.fetchedAt })),
});

/** The stored JSON (pricing/live/aggregate.ts RateDetails, dates as ISO text) as shown; null when there is none. */
export function presentRateDetails(stored: unknown): PresentedRateDetails | null {
  if (!stored || typeof stored !== 'object') return null;
  const d = stored as { kind: 'live' | 'static'; from: StoredSide; to: StoredSide; spreadPercent: string; computedAt: string };
  return { kind: d.kind, invoiceCurrency: side(d.from), paymentCurrency: side(d.to), spreadPercent: d.spreadPercent, computedAt: d.computedAt };
}

/** One CSV cell: `kind; spread; side asset=usdPrice [source market price @ fetchedAt, ...]` for both sides. */
export function rateDetailsCell(stored: unknown): string {
  const d = presentRateDetails(stored);
  if (!d) return '';
  const sideText = (label: string, s: PresentedRatePrice) =>
    `${label} ${s.asset}=${s.usdPrice} USD [${s.sources.map((x) => `${x.source} ${x.market} ${x.price} @ ${x.fetchedAt}`).join(', ')}]`;
  return [`${d.kind}`, `spread ${d.spreadPercent}%`, sideText('invoice', d.invoiceCurrency), sideText('payment', d.paymentCurrency)].join('; ');
}
