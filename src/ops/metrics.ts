// The Metrics of src/core/metrics.ts on prom-client: one registry per server (several servers in one process, as
// in the tests, never share series), with Node's process metrics in it too. Only src/ops imports prom-client.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Labels, Metrics, MetricSpec, Sample } from '../core/metrics.ts';
import type { Logger } from '../logger.ts';

/** How long a scrape-time gauge may take before the scrape goes on without it. */
export const COLLECT_DEADLINE_MS = 2_000;

/** A promise that rejects after `ms` unless `work` settled first (the work itself goes on; callers bound it too). */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** A gauge whose samples are read when scraped (refresh, before rendering); a failed read leaves it out. */
class ScrapeGauge<L extends string> extends Gauge<L> {
  private samples: Sample<L>[] = [];

  constructor(
    spec: MetricSpec<L>,
    registry: Registry,
    private readonly read: () => Promise<Sample<L>[]>,
  ) {
    super({ name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry] });
  }

  async refresh(): Promise<void> {
    this.samples = await this.read().catch(() => []);
  }

  override async get() {
    return { ...(await super.get()), values: this.samples };
  }
}

export class MetricsRegistry implements Metrics {
  readonly registry = new Registry();
  private readonly scrapeGauges: ScrapeGauge<string>[] = [];
  private readonly collectFailures: Counter<'metric'>;

  constructor(
    private readonly logger: Logger,
    private readonly collectDeadlineMs = COLLECT_DEADLINE_MS,
  ) {
    // Node's own (CPU, memory, event loop lag, GC, handles) under their usual names, which dashboards expect.
    collectDefaultMetrics({ register: this.registry });
    this.collectFailures = new Counter({
      name: 'payrail_metrics_collect_failures_total',
      help: 'Scrapes that went on without a scrape-time gauge because reading it failed or took longer than 2 s, by gauge.',
      labelNames: ['metric'],
      registers: [this.registry],
    });
  }

  counter<L extends string>(spec: MetricSpec<L> & { initial?: Labels<L>[] }) {
    const counter = new Counter<L>({ name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [this.registry] });
    for (const labels of spec.initial ?? []) counter.inc(labels, 0);
    return { inc: (labels: Labels<L>, value = 1) => counter.inc(labels, value) };
  }

  histogram<L extends string>(spec: MetricSpec<L> & { buckets: readonly number[] }) {
    const histogram = new Histogram<L>({ name: spec.name, help: spec.help, labelNames: spec.labelNames, buckets: [...spec.buckets], registers: [this.registry] });
    return { observe: (labels: Labels<L>, value: number) => histogram.observe(labels, value) };
  }

  gauge<L extends string>(spec: MetricSpec<L> & { collect(timeoutMs: number): Promise<Sample<L>[]> | Sample<L>[] }): void {
    const gauge = new ScrapeGauge(spec, this.registry, () =>
      withDeadline(Promise.resolve().then(() => spec.collect(this.collectDeadlineMs)), this.collectDeadlineMs, spec.name).catch((e: unknown) => {
        this.collectFailures.inc({ metric: spec.name });
        this.logger.warn({ err: e, metric: spec.name }, 'a metric could not be read for this scrape');
        throw e;
      }),
    );
    this.scrapeGauges.push(gauge as unknown as ScrapeGauge<string>);
  }

  /** The exposition text of every metric (Prometheus text format 0.0.4): scrape-time gauges read first, together. */
  async text(): Promise<string> {
    await Promise.all(this.scrapeGauges.map((g) => g.refresh()));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
