// The sources against recorded answers served locally, and the refresher's failure modes: one source down, timing
// out, answering garbage, zero or 30% off never moves the rate; all down: unavailable after maxAge, back with one.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { noMetrics } from '../../src/core/metrics.ts';
import { createLogger } from '../../src/logger.ts';
import { ratesConfigSchema } from '../../src/pricing/live/config.ts';
import { LiveRates } from '../../src/pricing/live/service.ts';
import { buildSource } from '../../src/pricing/live/sources.ts';
import { EXCHANGES, startRateSources, type RateSourcesServer } from '../support/rate-sources.ts';

let srv: RateSourcesServer;
beforeAll(async () => {
  srv = await startRateSources();
});
afterAll(() => srv.close());

interface Harness {
  rates: LiveRates;
  logs: Record<string, unknown>[];
  advance(ms: number): void;
}

function harness(extra: Record<string, unknown> = {}): Harness {
  const config = ratesConfigSchema.parse({ sources: srv.sources(), refreshSeconds: 30, maxAgeSeconds: 120, timeoutSeconds: 1, minSources: 2, ...extra });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const rates = new LiveRates(config, config.sources.map((s) => buildSource(s, new Map())), logger, noMetrics, now);
  return { rates, logs, advance: (ms) => (offset += ms) };
}

const usd = (h: Harness, asset: string) => {
  const p = h.rates.price(asset);
  return p.ok ? Number(p.usd.toFixed()) : p.reason;
};
const used = (h: Harness, asset: string) => {
  const p = h.rates.price(asset);
  return p.ok ? p.sources.map((s) => s.source).sort() : [];
};

beforeEach(() => {
  for (const s of [...EXCHANGES, 'coingecko'] as const) srv.set(s, 'ok');
  srv.setPrice('BTC', 95000);
});

describe('live rates from recorded answers', () => {
  it('every source answers through its real client; BTC, ETH and EUR are priced by several', async () => {
    const h = harness();
    await h.rates.refresh();
    expect(h.rates.sourceStates().map((s) => [s.source, s.ok])).toEqual([...EXCHANGES, 'coingecko'].map((s) => [s, true]));
    expect(usd(h, 'btc')).toBeCloseTo(95000, 6);
    expect(used(h, 'btc')).toEqual(['bitstamp', 'coingecko', 'kraken']);
    expect(usd(h, 'eth')).toBeCloseTo(3500, 6);
    // EUR: CoinGecko's and Bitstamp's (BTC/USD over BTC/EUR).
    expect(usd(h, 'eur')).toBeCloseTo(1.08, 6);
    expect(used(h, 'eur')).toEqual(['bitstamp', 'coingecko']);
    const q = h.rates.quote('usd', 'btc', 18);
    expect(q.ok && q.quote.details.to.sources.map((s) => s.market).sort()).toEqual(['BTC/USD', 'BTC/USD', 'bitcoin.usd']);
  });

  for (const failure of ['down', 'timeout', 'garbage', 'zero', { factor: 1.3 }] as const) {
    it(`one source ${typeof failure === 'object' ? '30% off' : failure}: the median holds and the others go on`, async () => {
      const h = harness();
      srv.set('bitstamp', failure);
      const started = Date.now();
      await h.rates.refresh();
      expect(Date.now() - started).toBeLessThan(5000);
      expect(usd(h, 'btc')).toBeCloseTo(95000, 6);
      expect(used(h, 'btc')).toEqual(['coingecko', 'kraken']);
      const state = h.rates.sourceStates().find((s) => s.source === 'bitstamp')!;
      expect(state.detail).toBeTruthy();
      // Logged once per change of state, not once per refresh.
      const lines = () => h.logs.filter((l) => l['source'] === 'bitstamp' && String(l['msg']).startsWith('rate source')).length;
      const first = lines();
      expect(first).toBeGreaterThanOrEqual(1);
      await h.rates.refresh();
      expect(lines()).toBe(first);
    });
  }

  it('all sources down: the rate is used until maxAge, then unavailable; back when one source returns', async () => {
    const h = harness({ minSources: 1 });
    await h.rates.refresh();
    for (const s of [...EXCHANGES, 'coingecko'] as const) srv.set(s, 'down');
    h.advance(60_000);
    await h.rates.refresh();
    expect(usd(h, 'btc')).toBeCloseTo(95000, 6);
    h.advance(61_000);
    expect(usd(h, 'btc')).toBe('no fresh source');
    await h.rates.refresh();
    expect(usd(h, 'btc')).toBe('no fresh source');
    srv.set('kraken', 'ok');
    srv.setPrice('BTC', 96000);
    await h.rates.refresh();
    expect(usd(h, 'btc')).toBeCloseTo(96000, 6);
    expect(used(h, 'btc')).toEqual(['kraken']);
    expect(h.logs.some((l) => l['msg'] === 'rate source answers again' && l['source'] === 'kraken')).toBe(true);
  });
});
