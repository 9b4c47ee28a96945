// Refunds waiting for the chain, read at scrape time (docs/operations.md, "Metrics and health").
import { Prisma } from '../../generated/prisma/client.ts';
import type { Metrics } from '../core/metrics.ts';
import { boundedRead, type Db } from '../db/client.ts';
import { MODES } from '../domain/modes.ts';

export function refundQueueGauge(metrics: Metrics, db: Db): void {
  metrics.gauge({
    name: 'payrail_refunds_queued',
    help: 'Refunds booked and not yet taken by the chain (the refund sender retries them), read at scrape time, by mode (live: real money).',
    labelNames: ['mode'],
    collect: async (timeoutMs) => {
      const rows = await boundedRead<{ mode: string; n: bigint }>(
        db,
        timeoutMs,
        Prisma.sql`SELECT c."mode"::text AS "mode", count(*) AS "n" FROM "Refund" r JOIN "Company" c ON c."id" = r."companyId" WHERE r."status" = 'queued' GROUP BY c."mode"`,
      );
      const counts = new Map(rows.map((r) => [r.mode, Number(r.n)]));
      return MODES.map((mode) => ({ labels: { mode }, value: counts.get(mode) ?? 0 }));
    },
  });
}
