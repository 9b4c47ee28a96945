// Refunds waiting for the chain, read at scrape time (docs/operations.md, "Metrics and health").
import { Prisma } from '../../generated/prisma/client.ts';
import type { Metrics } from '../core/metrics.ts';
import { boundedRead, type Db } from '../db/client.ts';

export function refundQueueGauge(metrics: Metrics, db: Db): void {
  metrics.gauge({
    name: 'payrail_refunds_queued',
    help: 'Refunds booked and not yet taken by the chain (the refund sender retries them), read at scrape time.',
    labelNames: [],
    collect: async (timeoutMs) => {
      const [row] = await boundedRead<{ n: bigint }>(db, timeoutMs, Prisma.sql`SELECT count(*) AS "n" FROM "Refund" WHERE "status" = 'queued'`);
      return [{ labels: {}, value: Number(row!.n) }];
    },
  });
}
