// Pure: from the prices the sources reported to one USD price per asset that a single bad source cannot move
// (docs/rates.md, "Aggregation"). No I/O, no clock: `now` is passed in.
import type { Decimal } from 'decimal.js';
import { Money } from '../../domain/money.ts';

/** One price a source reported: one unit of `base` costs `price` units of `quote` (both lower-case asset codes). */
export interface SourceQuote {
  source: string;
  base: string;
  quote: string;
  /** The market it came from, as the source names it ("BTC/USD", "bitcoin.usd"). */
  market: string;
  /** As reported: may be zero, negative or not a number (a garbage answer); the aggregation drops those. */
  price: Decimal;
  fetchedAt: Date;
}

export interface AggregationRules {
  maxAgeMs: number;
  minSources: number;
  maxDeviationPercent: Decimal;
}

/** One source's part in an asset's price: what it said and what that is in USD. */
export interface UsedPrice {
  source: string;
  market: string;
  price: string;
  usd: string;
  fetchedAt: Date;
}

export interface DroppedPrice {
  source: string;
  market: string;
  reason: string;
}

export type AssetPrice =
  | { ok: true; asset: string; usd: Decimal; sources: UsedPrice[]; dropped: DroppedPrice[]; updatedAt: Date }
  | { ok: false; asset: string; reason: string; dropped: DroppedPrice[] };

/** Quote currencies other than USD that exchange markets are priced in; their own USD price comes first. */
const BRIDGES = ['usdt', 'usdc', 'eur'];

const median = (values: Decimal[]): Decimal => {
  const sorted = [...values].sort((a, b) => a.comparedTo(b));
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : sorted[mid - 1]!.plus(sorted[mid]!).div(2);
};

interface Candidate {
  source: string;
  market: string;
  price: Decimal;
  usd: Decimal;
  fetchedAt: Date;
}

/**
 * Each source counts once per asset (its direct USD market first); prices more than maxDeviationPercent from the
 * median of the valid ones are dropped; at least minSources must remain; the result is their median.
 */
function decide(asset: string, candidates: Candidate[], dropped: DroppedPrice[], rules: AggregationRules): AssetPrice {
  const kept: Candidate[] = [];
  const ref = candidates.length ? median(candidates.map((c) => c.usd)) : null;
  for (const c of candidates) {
    const deviation = c.usd.minus(ref!).abs().div(ref!).times(100);
    if (deviation.gt(rules.maxDeviationPercent)) {
      dropped.push({ source: c.source, market: c.market, reason: `${deviation.toDecimalPlaces(2).toFixed()}% from the median of the sources` });
    } else kept.push(c);
  }
  if (kept.length < rules.minSources) {
    const why =
      candidates.length === 0
        ? 'no fresh source'
        : `too few agreeing sources (${kept.length} of ${candidates.length} agree, ${rules.minSources} needed)`;
    return { ok: false, asset, reason: why, dropped };
  }
  const usd = median(kept.map((c) => c.usd));
  const sources = kept.map((c) => ({ source: c.source, market: c.market, price: c.price.toFixed(), usd: c.usd.toFixed(), fetchedAt: c.fetchedAt }));
  const updatedAt = new Date(Math.min(...kept.map((c) => c.fetchedAt.getTime())));
  return { ok: true, asset, usd, sources, dropped, updatedAt };
}

const usable = (q: SourceQuote, rules: AggregationRules, now: Date): string | null => {
  if (now.getTime() - q.fetchedAt.getTime() > rules.maxAgeMs) return 'stale';
  if (!q.price.isFinite()) return 'not a number';
  if (!q.price.gt(0)) return q.price.isZero() ? 'zero' : 'negative';
  return null;
};

/**
 * The USD price of each asset in `assets` (and of USD itself, 1). Stage one prices the bridges (USDT, USDC, EUR)
 * from USD markets only; stage two also converts markets quoted in a bridge that has a good price. EUR is also
 * implied by a source that quotes one asset in both USD and EUR (CoinGecko's vs_currencies=usd,eur).
 */
export function aggregate(quotes: SourceQuote[], assets: string[], rules: AggregationRules, now: Date): Map<string, AssetPrice> {
  const dropped = new Map<string, DroppedPrice[]>();
  const dropFor = (asset: string) => dropped.get(asset) ?? (dropped.set(asset, []), dropped.get(asset)!);
  const fresh: SourceQuote[] = [];
  for (const q of quotes) {
    const problem = usable(q, rules, now);
    if (problem === null) fresh.push(q);
    else if (problem !== 'stale') dropFor(q.base).push({ source: q.source, market: q.market, reason: problem });
  }

  const candidatesFor = (asset: string, bridges: Map<string, AssetPrice>): Candidate[] => {
    const bySource = new Map<string, Candidate>();
    const consider = (c: Candidate, direct: boolean) => {
      if (direct || !bySource.has(c.source)) bySource.set(c.source, c);
    };
    // Converted first so that a source's direct USD market replaces them.
    for (const q of fresh) {
      if (q.base !== asset || q.quote === 'usd') continue;
      const bridge = bridges.get(q.quote);
      if (bridge?.ok) consider({ source: q.source, market: q.market, price: q.price, usd: q.price.times(bridge.usd), fetchedAt: q.fetchedAt }, false);
    }
    if (asset === 'eur') {
      for (const implied of impliedEur(fresh)) consider(implied, false);
    }
    for (const q of fresh) {
      if (q.base === asset && q.quote === 'usd') consider({ source: q.source, market: q.market, price: q.price, usd: q.price, fetchedAt: q.fetchedAt }, true);
    }
    return [...bySource.values()];
  };

  const stageOne = new Map<string, AssetPrice>();
  for (const bridge of BRIDGES) stageOne.set(bridge, decide(bridge, candidatesFor(bridge, new Map()), [], rules));
  const result = new Map<string, AssetPrice>();
  result.set('usd', { ok: true, asset: 'usd', usd: new Money(1), sources: [], dropped: [], updatedAt: now });
  for (const asset of assets) {
    if (asset === 'usd') continue;
    result.set(asset, decide(asset, candidatesFor(asset, stageOne), [...(dropped.get(asset) ?? [])], rules));
  }
  return result;
}

/** EUR in USD from a source that priced the same asset in both (the first of btc, eth, usdt it has). */
function impliedEur(fresh: SourceQuote[]): Candidate[] {
  const out: Candidate[] = [];
  const sources = new Set(fresh.map((q) => q.source));
  for (const source of sources) {
    for (const asset of ['btc', 'eth', 'usdt']) {
      const usd = fresh.find((q) => q.source === source && q.base === asset && q.quote === 'usd');
      const eur = fresh.find((q) => q.source === source && q.base === asset && q.quote === 'eur');
      if (!usd || !eur) continue;
      const fetchedAt = usd.fetchedAt < eur.fetchedAt ? usd.fetchedAt : eur.fetchedAt;
      const rate = usd.price.div(eur.price);
      out.push({ source, market: `${usd.market} / ${eur.market}`, price: rate, usd: rate, fetchedAt });
      break;
    }
  }
  return out;
}

/** What one side of a rate was made of, for the invoice's audit. */
export interface PriceAudit {
  asset: string;
  usd: string;
  sources: UsedPrice[];
}

/** A rate between two currencies, through USD, with the spread, and what it was made of. */
export interface RateQuote {
  rate: Decimal;
  details: RateDetails;
}

export interface RateDetails {
  /** "live" (aggregated sources) or "static" (the RATES_FILE table). */
  kind: 'live' | 'static';
  from: PriceAudit;
  to: PriceAudit;
  spreadPercent: string;
  computedAt: Date;
}

export type RateOutcome = { ok: true; quote: RateQuote } | { ok: false; currency: string; reason: string };

/** How many units of `to` one unit of `from` buys: from.usd / to.usd, raised by the spread (the client pays it). */
export function crossRate(
  from: AssetPrice | undefined,
  to: AssetPrice | undefined,
  spreadPercent: Decimal,
  places: number,
  now: Date,
  kind: RateDetails['kind'] = 'live',
): RateOutcome {
  for (const side of [to, from]) {
    if (!side) return { ok: false, currency: '?', reason: 'no rate source covers it' };
    if (!side.ok) return { ok: false, currency: side.asset, reason: side.reason };
  }
  const f = from as Extract<AssetPrice, { ok: true }>;
  const t = to as Extract<AssetPrice, { ok: true }>;
  const rate = f.usd.div(t.usd).times(new Money(100).plus(spreadPercent).div(100)).toDecimalPlaces(places, Money.ROUND_HALF_EVEN);
  if (!rate.gt(0)) return { ok: false, currency: t.asset, reason: 'the rate rounds to zero' };
  const audit = (p: typeof f): PriceAudit => ({ asset: p.asset, usd: p.usd.toFixed(), sources: p.sources });
  return { ok: true, quote: { rate, details: { kind, from: audit(f), to: audit(t), spreadPercent: spreadPercent.toFixed(), computedAt: now } } };
}
