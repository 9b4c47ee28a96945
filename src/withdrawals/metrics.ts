// The withdrawals on their way out, read at scrape time (docs/operations.md, "Metrics and health").
import { Prisma } from '../../generated/prisma/client.ts';
import type { Metrics } from '../core/metrics.ts';
import { boundedRead, type Db } from '../db/client.ts';

/** The stages of a withdrawal that is not final yet (status processing). */
const IN_FLIGHT_STAGES = ['queued', 'sending', 'sent'] as const;

export function withdrawalQueueGauge(metrics: Metrics, db: Db): void {
  metrics.gauge({
    name: 'payrail_withdrawals_in_flight',
    help: 'Withdrawals not final yet, read at scrape time, by stage: queued (waiting for the sender), sending (handed to the chain adapter), sent (on chain, waiting for its confirmations).',
    labelNames: ['stage'],
    collect: async (timeoutMs) => {
      const rows = await boundedRead<{ stage: string; n: bigint }>(
        db,
        timeoutMs,
        Prisma.sql`SELECT "stage", count(*) AS "n" FROM "Withdrawal" WHERE "stage" IN (${Prisma.join(IN_FLIGHT_STAGES)}) GROUP BY "stage"`,
      );
      const counts = new Map(rows.map((r) => [r.stage, Number(r.n)]));
      return IN_FLIGHT_STAGES.map((stage) => ({ labels: { stage }, value: counts.get(stage) ?? 0 }));
    },
  });
}
