// The aggregation alone (pure): median, outliers, minimum sources, age, bridges through stablecoins and EUR.
import { describe, expect, it } from 'vitest';
import { aggregate, crossRate, type SourceQuote } from '../../src/pricing/live/aggregate.ts';
import { Money } from '../../src/domain/money.ts';
import { chooseMarkets } from '../../src/pricing/live/sources.ts';

const now = new Date('2026-11-26T12:00:00.000Z');
const rules = { maxAgeMs: 120_000, minSources: 2, maxDeviationPercent: new Money(3) };
const q = (source: string, base: string, quote: string, price: string | number, ageMs = 1000): SourceQuote => ({
  source,
  base,
  quote,
  market: `${base.toUpperCase()}/${quote.toUpperCase()}`,
  price: new Money(price),
  fetchedAt: new Date(now.getTime() - ageMs),
});
const usdOf = (quotes: SourceQuote[], asset: string, r = rules) => {
  const p = aggregate(quotes, [asset], r, now).get(asset)!;
  return p.ok ? p.usd.toFixed() : `unavailable: ${p.reason}`;
};

describe('aggregate', () => {
  it('takes the median of the sources', () => {
    expect(usdOf([q('a', 'btc', 'usd', 95000), q('b', 'btc', 'usd', 95100), q('c', 'btc', 'usd', 94900)], 'btc')).toBe('95000');
    expect(usdOf([q('a', 'btc', 'usd', 95000), q('b', 'btc', 'usd', 95100)], 'btc')).toBe('95050');
  });

  it('drops a source 30% off and keeps the median of the others', () => {
    const p = aggregate([q('a', 'btc', 'usd', 95000), q('b', 'btc', 'usd', 95100), q('c', 'btc', 'usd', 94900), q('d', 'btc', 'usd', 123500)], ['btc'], rules, now).get('btc')!;
    expect(p.ok && p.usd.toFixed()).toBe('95000');
    expect(p.ok && p.sources.map((s) => s.source)).toEqual(['a', 'b', 'c']);
    expect(p.dropped).toEqual([{ source: 'd', market: 'BTC/USD', reason: expect.stringMatching(/% from the median/) }]);
  });

  it('drops zero, negative and not-a-number prices before the median, naming why', () => {
    const p = aggregate([q('a', 'eth', 'usd', 3500), q('b', 'eth', 'usd', 3501), q('z', 'eth', 'usd', 0), q('n', 'eth', 'usd', -5), q('x', 'eth', 'usd', NaN)], ['eth'], rules, now).get('eth')!;
    expect(p.ok && p.usd.toFixed()).toBe('3500.5');
    expect(p.dropped.map((d) => `${d.source}:${d.reason}`).sort()).toEqual(['n:negative', 'x:not a number', 'z:zero']);
  });

  it('requires minSources agreeing sources', () => {
    expect(usdOf([q('a', 'btc', 'usd', 95000)], 'btc')).toBe('unavailable: too few agreeing sources (1 of 1 agree, 2 needed)');
    // Two that disagree: neither can be trusted.
    expect(usdOf([q('a', 'btc', 'usd', 95000), q('b', 'btc', 'usd', 123500)], 'btc')).toMatch(/too few agreeing sources \(0 of 2 agree/);
    expect(usdOf([], 'btc')).toBe('unavailable: no fresh source');
  });

  it('never uses a price older than maxAge', () => {
    expect(usdOf([q('a', 'btc', 'usd', 95000, 121_000), q('b', 'btc', 'usd', 95000, 121_000)], 'btc')).toBe('unavailable: no fresh source');
    expect(usdOf([q('a', 'btc', 'usd', 95000, 119_000), q('b', 'btc', 'usd', 95000, 121_000)], 'btc', { ...rules, minSources: 1 })).toBe('95000');
  });

  it('prices stablecoins from their own markets and converts markets quoted in them', () => {
    const quotes = [q('k', 'usdt', 'usd', '1.0002'), q('g', 'usdt', 'usd', '1.0004'), q('b', 'eth', 'usdt', 3500), q('s', 'eth', 'usd', '3500.9')];
    const p = aggregate(quotes, ['eth', 'usdt'], rules, now);
    const usdt = p.get('usdt')!;
    expect(usdt.ok && usdt.usd.toFixed()).toBe('1.0003');
    const eth = p.get('eth')!;
    expect(eth.ok && eth.sources.map((s) => [s.source, s.usd])).toEqual([
      ['b', '3501.05'],
      ['s', '3500.9'],
    ]);
    // Without a USDT price the USDT market is not used (never assumed to be 1).
    expect(usdOf([q('b', 'eth', 'usdt', 3500), q('s', 'eth', 'usd', '3500.9')], 'eth')).toMatch(/too few agreeing sources \(1 of 1/);
  });

  it('counts a source once per asset, its USD market first', () => {
    const p = aggregate([q('k', 'usdt', 'usd', 1), q('g', 'usdt', 'usd', 1), q('a', 'btc', 'usdt', 90000), q('a', 'btc', 'usd', 95000), q('b', 'btc', 'usd', 95000)], ['btc'], rules, now).get('btc')!;
    expect(p.ok && p.sources.map((s) => `${s.source}:${s.market}`)).toEqual(['a:BTC/USD', 'b:BTC/USD']);
  });

  it('prices EUR from EUR/USD markets or a source quoting one asset in both', () => {
    const quotes = [q('k', 'eur', 'usd', '1.08'), q('g', 'btc', 'usd', 95000), q('g', 'btc', 'eur', '87962.962962962962962963')];
    const eur = aggregate(quotes, ['eur'], rules, now).get('eur')!;
    expect(eur.ok && eur.usd.toDecimalPlaces(6).toFixed()).toBe('1.08');
    expect(eur.ok && eur.sources.map((s) => s.source)).toEqual(['g', 'k']);
  });
});

describe('crossRate', () => {
  const prices = aggregate([q('a', 'btc', 'usd', 100000), q('b', 'btc', 'usd', 100000), q('a', 'eur', 'usd', '1.1'), q('b', 'eur', 'usd', '1.1')], ['btc', 'eur'], rules, now);
  it('goes through USD and adds the spread to what the client pays', () => {
    const plain = crossRate(prices.get('usd'), prices.get('btc'), new Money(0), 18, now);
    expect(plain.ok && plain.quote.rate.toFixed()).toBe('0.00001');
    const spread = crossRate(prices.get('eur'), prices.get('btc'), new Money('1.5'), 18, now);
    expect(spread.ok && spread.quote.rate.toFixed()).toBe('0.000011165');
    expect(spread.ok && spread.quote.details).toMatchObject({ kind: 'live', spreadPercent: '1.5', from: { asset: 'eur', usd: '1.1' }, to: { asset: 'btc', usd: '100000' } });
  });
  it('names the currency and why when a side has no good price', () => {
    const none = aggregate([], ['eth'], rules, now);
    expect(crossRate(prices.get('usd'), none.get('eth'), new Money(0), 18, now)).toEqual({ ok: false, currency: 'eth', reason: 'no fresh source' });
  });
});

describe('chooseMarkets', () => {
  it('prices each asset in USD first, then a stablecoin, then EUR; EUR itself through an asset in both', () => {
    expect(chooseMarkets(new Set(['BTC/USD', 'BTC/EUR', 'ETH/USDT', 'ETH/EUR', 'LTC/USDC', 'SOL/EUR', 'ADA/USD']))).toEqual([
      { asset: 'btc', symbol: 'BTC/USD', quote: 'usd' },
      { asset: 'eth', symbol: 'ETH/USDT', quote: 'usdt' },
      { asset: 'sol', symbol: 'SOL/EUR', quote: 'eur' },
      { asset: 'ltc', symbol: 'LTC/USDC', quote: 'usdc' },
      { asset: 'btc', symbol: 'BTC/EUR', quote: 'eur' },
    ]);
    expect(chooseMarkets(new Set(['BTC/USD', 'BTC/EUR', 'EUR/USD'])).map((m) => m.symbol)).toEqual(['BTC/USD', 'EUR/USD']);
  });
});
