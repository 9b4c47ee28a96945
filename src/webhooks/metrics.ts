// What the webhook worker counts (docs/operations.md, "Metrics and health"): outcomes of the attempts it recorded,
// how long after its event a delivery arrived, and the outbox's backlog, read at scrape time.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Metrics } from '../core/metrics.ts';
import { boundedRead, type Db } from '../db/client.ts';
import { MODES, type Mode } from '../domain/modes.ts';

export const DELIVERY_OUTCOMES = ['delivered', 'retrying', 'given_up', 'no_url'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

// Retries spread over ~3 days (schedule.ts): the lag buckets reach that far.
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 21_600, 86_400, 259_200];
const ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface WebhookMetrics {
  /** An attempt (or, for no_url, a delivery that had nowhere to go) of a `mode` merchant recorded; `lagSeconds` for delivered ones. */
  recorded(outcome: DeliveryOutcome, mode: Mode, attemptSeconds: number | null, lagSeconds: number | null): void;
}

export function webhookMetrics(metrics: Metrics): WebhookMetrics {
  const outcomes = metrics.counter({
    name: 'payrail_webhook_delivery_outcomes_total',
    help: 'Webhook attempts recorded by this process, by outcome: delivered (2xx), retrying (failed; the next attempt is scheduled), given_up (the last attempt of the schedule failed), no_url (the merchant removed the URL; nothing was sent); and by the merchant\'s mode (live: real money).',
    labelNames: ['outcome', 'mode'],
    initial: DELIVERY_OUTCOMES.flatMap((outcome) => MODES.map((mode) => ({ outcome, mode }))),
  });
  const lag = metrics.histogram({
    name: 'payrail_webhook_delivery_lag_seconds',
    help: 'From the event (committed) to its webhook answered 2xx, retries included, for deliveries by this process.',
    labelNames: [],
    buckets: LAG_BUCKETS,
  });
  const attempt = metrics.histogram({
    name: 'payrail_webhook_attempt_duration_seconds',
    help: "One webhook attempt's HTTP exchange (connect to the end of the answer, or the timeout).",
    labelNames: [],
    buckets: ATTEMPT_BUCKETS,
  });
  return {
    recorded(outcome, mode, attemptSeconds, lagSeconds) {
      outcomes.inc({ outcome, mode });
      if (attemptSeconds !== null) attempt.observe({}, attemptSeconds);
      if (lagSeconds !== null) lag.observe({}, Math.max(0, lagSeconds));
    },
  };
}

/** The outbox's backlog, read when scraped: pending deliveries due now, and those waiting for their retry time. */
export function webhookQueueGauge(metrics: Metrics, db: Db): void {
  metrics.gauge({
    name: 'payrail_webhook_deliveries_pending',
    help: 'Webhook deliveries not delivered yet, read at scrape time: due (to be sent now; a growing number means the workers fall behind) or scheduled (a retry at a later time).',
    labelNames: ['state'],
    collect: async (timeoutMs) => {
      const [row] = await boundedRead<{ due: bigint; scheduled: bigint }>(
        db,
        timeoutMs,
        Prisma.sql`SELECT count(*) FILTER (WHERE "nextAttemptAt" <= now()) AS "due", count(*) FILTER (WHERE "nextAttemptAt" > now()) AS "scheduled"
          FROM "WebhookDelivery" WHERE "status" = 'pending'`,
      );
      return [
        { labels: { state: 'due' }, value: Number(row!.due) },
        { labels: { state: 'scheduled' }, value: Number(row!.scheduled) },
      ];
    },
  });
}
