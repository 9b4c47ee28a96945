// Live rates in memory: a background refresh asks every source (each with its own deadline, none waiting for
// another), keeps each source's last answer, and re-aggregates. Requests only read memory (docs/rates.md).
import type { Decimal } from 'decimal.js';
import { noMetrics, type Counter, type Metrics } from '../../core/metrics.ts';
import type { Logger } from '../../logger.ts';
import { aggregate, crossRate, type AssetPrice, type RateOutcome, type SourceQuote } from './aggregate.ts';
import type { RatesConfig } from './config.ts';
import { PRICED_ASSETS, StaticTableSource, type PriceSource } from './sources.ts';

export interface SourceState {
  source: string;
  ok: boolean;
  /** Why the last refresh failed, or why some of its prices were not used. */
  detail: string | null;
  lastSuccessAt: Date | null;
}

const withDeadline = <T>(work: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });

export class LiveRates {
  private readonly quotes = new Map<string, SourceQuote[]>();
  private readonly states = new Map<string, SourceState>();
  /** What was logged last per source and per (source, market): logs only on a change. */
  private readonly noted = new Map<string, string>();
  private snapshot = new Map<string, AssetPrice>();
  private errors: Counter<'source' | 'kind'> = noMetrics.counter({ name: '', help: '', labelNames: ['source', 'kind'] });
  private instrumented = false;

  constructor(
    readonly config: RatesConfig,
    private readonly sources: PriceSource[],
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly now: () => Date = () => new Date(),
  ) {
    // The static table needs no fetch: it counts from the start, before the first refresh.
    for (const source of sources) {
      if (source instanceof StaticTableSource) this.quotes.set(source.name, source.quotesNow(this.now()));
    }
    this.recompute();
  }

  /** The metrics, declared by the process that refreshes (a chains worker builds the service but never refreshes). */
  private instrument(): void {
    if (this.instrumented) return;
    this.instrumented = true;
    const metrics = this.metrics;
    this.errors = metrics.counter({
      name: 'payrail_rate_source_errors_total',
      help: 'Refreshes in which a rate source failed (failed: error, timeout or garbage answer) or gave prices that were not used (invalid: zero, negative or not a number; outlier: too far from the median).',
      labelNames: ['source', 'kind'],
      initial: this.sources.flatMap((s) => ['failed', 'invalid', 'outlier'].map((kind) => ({ source: s.name, kind }))),
    });
    metrics.gauge({
      name: 'payrail_rate_age_seconds',
      help: "Age of each asset's live USD price (its oldest source used); absent while the asset has no good price.",
      labelNames: ['asset'],
      collect: () => {
        const now = this.now().getTime();
        return PRICED_ASSETS.flatMap((asset) => {
          const p = this.price(asset);
          return p.ok ? [{ labels: { asset }, value: (now - p.updatedAt.getTime()) / 1000 }] : [];
        });
      },
    });
    metrics.gauge({
      name: 'payrail_rate_available',
      help: 'Whether each asset has a good live USD price now (1) or proceed in it answers 503 RATE_UNAVAILABLE (0).',
      labelNames: ['asset'],
      collect: () => PRICED_ASSETS.map((asset) => ({ labels: { asset }, value: this.price(asset).ok ? 1 : 0 })),
    });
  }

  get refreshMs(): number {
    return this.config.refreshSeconds * 1000;
  }

  /** One refresh of every source; a source that fails keeps its last answer until it ages out. */
  async refresh(): Promise<void> {
    this.instrument();
    const timeoutMs = this.config.timeoutSeconds * 1000;
    await Promise.all(
      this.sources.map(async (source) => {
        try {
          await source.prepare?.();
          const quotes = await withDeadline(source.fetch(timeoutMs), timeoutMs + 500, source.name);
          // Stamped on the refresher's clock when the answer arrived.
          const at = this.now();
          this.quotes.set(source.name, quotes.map((q) => ({ ...q, fetchedAt: at })));
          this.setState(source.name, null);
        } catch (e) {
          this.errors.inc({ source: source.name, kind: 'failed' });
          this.setState(source.name, e instanceof Error ? e.message : String(e));
        }
      }),
    );
    this.recompute();
  }

  private setState(source: string, error: string | null): void {
    const previous = this.states.get(source);
    const now = this.now();
    this.states.set(source, { source, ok: error === null, detail: error, lastSuccessAt: error === null ? now : (previous?.lastSuccessAt ?? null) });
    const key = `source:${source}`;
    const state = error === null ? 'ok' : 'failing';
    if (this.noted.get(key) !== state) {
      this.noted.set(key, state);
      if (error === null) {
        if (previous) this.logger.info({ source }, 'rate source answers again');
      } else this.logger.warn({ source, error }, 'rate source failed');
    }
  }

  /** Aggregates the kept answers now (also run by each refresh). */
  recompute(): void {
    const rules = { maxAgeMs: this.config.maxAgeSeconds * 1000, minSources: this.config.minSources, maxDeviationPercent: this.config.maxDeviationPercent };
    this.snapshot = aggregate([...this.quotes.values()].flat(), [...PRICED_ASSETS], rules, this.now());
    const unused = new Map<string, { market: string; reason: string }[]>();
    for (const price of this.snapshot.values()) {
      for (const d of price.dropped) unused.set(d.source, [...(unused.get(d.source) ?? []), { market: d.market, reason: d.reason }]);
    }
    for (const [source, list] of unused) {
      const kinds = new Set(list.map((d) => (d.reason.includes('median') ? 'outlier' : 'invalid')));
      for (const kind of kinds) this.errors.inc({ source, kind });
    }
    // Log each (source, market) once when its price stops or starts being used.
    const current = new Set<string>();
    for (const [source, list] of unused) {
      for (const d of list) {
        const key = `price:${source}:${d.market}`;
        current.add(key);
        const kind = d.reason.includes('median') ? 'outlier' : 'invalid';
        if (this.noted.get(key) !== kind) {
          this.noted.set(key, kind);
          this.logger.warn({ source, market: d.market, reason: d.reason }, 'rate source price not used');
        }
      }
    }
    for (const key of [...this.noted.keys()]) {
      if (key.startsWith('price:') && !current.has(key)) {
        this.noted.delete(key);
        this.logger.info({ source: key.split(':')[1], market: key.split(':').slice(2).join(':') }, 'rate source price used again');
      }
    }
    const states = this.states;
    for (const [source, list] of unused) {
      const s = states.get(source);
      if (s?.ok) s.detail = `not used: ${list.map((d) => `${d.market} (${d.reason})`).join(', ')}`;
    }
  }

  /** An asset's USD price now; one whose sources aged out since the last refresh is unavailable, never stale. */
  price(asset: string): AssetPrice {
    const p = this.snapshot.get(asset);
    if (!p) return { ok: false, asset, reason: 'no rate source has priced it yet', dropped: [] };
    if (p.ok && asset !== 'usd' && this.now().getTime() - p.updatedAt.getTime() > this.config.maxAgeSeconds * 1000) {
      return { ok: false, asset, reason: 'no fresh source', dropped: [] };
    }
    return p;
  }

  quote(from: string, to: string, places: number): RateOutcome {
    return crossRate(this.price(from), this.price(to), this.config.spreadPercent as Decimal, places, this.now());
  }

  sourceStates(): SourceState[] {
    return this.sources.map((s) => this.states.get(s.name) ?? { source: s.name, ok: false, detail: 'not asked yet', lastSuccessAt: null });
  }
}
