// What the service counts and measures, without naming the metrics library: features declare their metrics here
// and update them; src/ops/metrics.ts implements it with prom-client, one registry per server (docs/operations.md,
// "Metrics and health"). Label values must come from closed sets (statuses, outcomes, route templates), never
// from input, or a client could create series without end.

export type Labels<L extends string> = { [K in L]: string };

export interface MetricSpec<L extends string> {
  /** `payrail_...`, in Prometheus' naming (`_total` for counters, the unit as suffix). */
  name: string;
  help: string;
  labelNames: readonly L[];
}

export interface Counter<L extends string> {
  inc(labels: Labels<L>, value?: number): void;
}

export interface Histogram<L extends string> {
  /** `value` in the unit the name says (seconds). */
  observe(labels: Labels<L>, value: number): void;
}

export interface Sample<L extends string> {
  labels: Labels<L>;
  value: number;
}

export interface Metrics {
  /** `initial`: label sets shown as 0 before anything happened (so rates and alerts see the series from the start). */
  counter<L extends string>(spec: MetricSpec<L> & { initial?: Labels<L>[] }): Counter<L>;
  histogram<L extends string>(spec: MetricSpec<L> & { buckets: readonly number[] }): Histogram<L>;
  /**
   * A gauge computed at scrape time. `collect` should bound its reads by `timeoutMs` (boundedRead); one that fails
   * or outlasts it is left out of that scrape (and counted in payrail_metrics_collect_failures_total) instead of
   * failing or holding the scrape.
   */
  gauge<L extends string>(spec: MetricSpec<L> & { collect(timeoutMs: number): Promise<Sample<L>[]> | Sample<L>[] }): void;
}

/** For processes that expose no metrics: everything is accepted and dropped. */
export const noMetrics: Metrics = {
  counter: () => ({ inc: () => {} }),
  histogram: () => ({ observe: () => {} }),
  gauge: () => {},
};
