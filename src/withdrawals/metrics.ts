// The withdrawals on their way out, read at scrape time (docs/operations.md, "Metrics and health").
import { Prisma } from '../../generated/prisma/client.ts';
import type { Metrics } from '../core/metrics.ts';
import { boundedRead, type Db } from '../db/client.ts';
import { MODES } from '../domain/modes.ts';

/** The stages of a withdrawal that is not final yet (status processing). */
const IN_FLIGHT_STAGES = ['queued', 'sending', 'sent'] as const;

export function withdrawalQueueGauge(metrics: Metrics, db: Db): void {
  metrics.gauge({
    name: 'payrail_withdrawals_in_flight',
    help: 'Withdrawals not final yet, read at scrape time, by mode (live: real money) and stage: queued (waiting for the sender), sending (handed to the chain adapter), sent (on chain, waiting for its confirmations).',
    labelNames: ['mode', 'stage'],
    collect: async (timeoutMs) => {
      const rows = await boundedRead<{ mode: string; stage: string; n: bigint }>(
        db,
        timeoutMs,
        Prisma.sql`SELECT c."mode"::text AS "mode", w."stage", count(*) AS "n" FROM "Withdrawal" w JOIN "Company" c ON c."id" = w."companyId"
          WHERE w."stage" IN (${Prisma.join(IN_FLIGHT_STAGES)}) GROUP BY c."mode", w."stage"`,
      );
      const counts = new Map(rows.map((r) => [`${r.mode}/${r.stage}`, Number(r.n)]));
      return MODES.flatMap((mode) => IN_FLIGHT_STAGES.map((stage) => ({ labels: { mode, stage }, value: counts.get(`${mode}/${stage}`) ?? 0 })));
    },
  });
}
