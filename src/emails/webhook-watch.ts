// Notices a merchant's webhook endpoint failing for a while and records it as an internal event (webhook.failing),
// which the planner turns into the merchant's e-mail like any other event. One notice per failing stretch: an
// endpoint is failing since its oldest pending delivery that has failed attempts was written; a notice is recorded
// once for that moment, so a new one comes only after that delivery went out (or gave up) and a later one fails.
import { commitWithEvents, recordEvent, type EventDeps } from '../core/events.ts';
import { WEBHOOK_FAILING } from './declarations.ts';

export async function noticeFailingWebhooks(deps: EventDeps, failingAfterMs: number): Promise<number> {
  const threshold = new Date(Date.now() - failingAfterMs);
  const failing = await deps.db.$queryRaw<{ companyId: string; since: Date; url: string }[]>`
    SELECT d."companyId"::text AS "companyId", min(d."createdAt") AS "since", c."webhookUrl" AS "url"
    FROM "WebhookDelivery" d JOIN "Company" c ON c."id" = d."companyId"
    WHERE d."status" = 'pending' AND d."attempts" > 0 AND c."webhookUrl" IS NOT NULL
    GROUP BY d."companyId", c."webhookUrl"
    HAVING min(d."createdAt") < ${threshold}`;
  let recorded = 0;
  for (const f of failing) {
    const since = f.since.toISOString();
    const added = await commitWithEvents(deps, async (tx) => {
      // The company's row lock: two processes noticing at once record one event.
      await tx.$queryRaw`SELECT 1 FROM "Company" WHERE "id" = ${f.companyId}::uuid FOR UPDATE`;
      const [known] = await tx.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS "n" FROM "Event" WHERE "companyId" = ${f.companyId}::uuid AND "type" = ${WEBHOOK_FAILING} AND "payload"->>'since' = ${since}`;
      if (known!.n > 0) return false;
      await recordEvent(tx, {
        type: WEBHOOK_FAILING,
        companyId: f.companyId,
        subject: { type: 'company', id: f.companyId },
        payload: { url: f.url, since },
        deliver: false,
      });
      return true;
    });
    if (added) recorded++;
  }
  return recorded;
}
