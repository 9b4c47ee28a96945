// Webhook settings, the delivery log, redelivery, the polling catch-up feed and the test event.
import { TEST_WEBHOOK_MESSAGE } from './webhook-doc.ts';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { recordAudit } from '../core/audit.ts';
import type { Actor } from '../core/scopes.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { httpUrl, instant, sequenceCursor } from '../core/validation.ts';
import { parseJsonKeepingNumbers } from '../core/json.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import { ALLOW_PRIVATE_HINT, literalHostBlocked } from './ssrf.ts';
import type { SendResult, WebhookSender } from './sender.ts';

export interface WebhookDeps {
  db: Db;
  clock: Clock;
  sender: WebhookSender;
  allowPrivate: boolean;
  /** Wakes the delivery worker. */
  wake: () => void;
  /** Events for the service's own processes (every feature's and core's): not in the feed, not redeliverable. */
  internalEventTypes: readonly string[];
}

export const webhookUrlSchema = z.object({ webHookUrl: httpUrl.nullable() });

export async function setWebhookUrl(
  deps: WebhookDeps,
  company: Company,
  actor: Actor,
  { webHookUrl }: z.output<typeof webhookUrlSchema>,
): Promise<{ webHookUrl: string | null }> {
  if (webHookUrl && literalHostBlocked(new URL(webHookUrl), deps.allowPrivate)) {
    throw new ValidationError([{ path: 'webHookUrl', message: `must not point at a private, loopback or link-local address ${ALLOW_PRIVATE_HINT}` }]);
  }
  await deps.db.$transaction(async (tx) => {
    const before = await tx.company.findUniqueOrThrow({ where: { id: company.id }, select: { webhookUrl: true } });
    await tx.company.update({ where: { id: company.id }, data: { webhookUrl: webHookUrl } });
    await recordAudit(tx, company.id, actor, 'webhook_url.changed', { from: urlForAudit(before.webhookUrl), to: urlForAudit(webHookUrl) });
  });
  return { webHookUrl };
}

/** A URL as the audit log shows it: without user info or query, where a receiver may keep a secret. */
const urlForAudit = (url: string | null) => {
  if (url === null) return null;
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
};

/** The company's webhook URL and secret; a 422 when no URL is set (nothing could be sent). */
async function requireEndpoint(deps: WebhookDeps, company: Company): Promise<{ webhookUrl: string; secretKey: string }> {
  const { webhookUrl, secretKey } = await deps.db.company.findUniqueOrThrow({ where: { id: company.id }, select: { webhookUrl: true, secretKey: true } });
  if (!webhookUrl) throw new ValidationError([{ path: 'webHookUrl', message: 'set a webhook URL first' }], 'No webhook URL is set');
  return { webhookUrl, secretKey };
}

export async function getWebhookUrl(deps: WebhookDeps, company: Company): Promise<{ webHookUrl: string | null }> {
  const row = await deps.db.company.findUniqueOrThrow({ where: { id: company.id }, select: { webhookUrl: true } });
  return { webHookUrl: row.webhookUrl };
}

export interface TestWebhookResult extends SendResult {
  eventId: string;
  url: string;
}

/** Sends a signed test event to the configured URL now and reports what happened (not retried, not logged). */
export async function sendTestWebhook(deps: WebhookDeps, company: Company): Promise<TestWebhookResult> {
  const { webhookUrl, secretKey } = await requireEndpoint(deps, company);
  const eventId = `test_${randomUUID()}`;
  const sentAt = deps.clock.real();
  const body = JSON.stringify({ type: 'test', message: TEST_WEBHOOK_MESSAGE, eventId, sentAt: sentAt.toISOString() });
  const result = await deps.sender.send({ url: webhookUrl, eventId, body, secretKey, mode: company.mode, timestampSeconds: Math.floor(sentAt.getTime() / 1000) });
  return { ...result, eventId, url: webhookUrl };
}

export const deliveryListSchema = z.object({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  eventId: z.string().max(64).optional(),
  after: z.uuid({ message: 'must be a delivery id from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const deliveryInclude = {
  event: { select: { id: true, type: true, payload: true, createdAt: true } },
  attemptLog: { orderBy: { attempt: 'asc' } },
} satisfies Prisma.WebhookDeliveryInclude;

export type DeliveryRecord = Prisma.WebhookDeliveryGetPayload<{ include: typeof deliveryInclude }>;

export interface DeliveryFilter {
  /** Any of these statuses. */
  status?: string[] | undefined;
  eventId?: string | undefined;
}

/** The merchant's deliveries matching a filter: the one definition REST and GraphQL lists share. */
export const deliveryListWhere = (company: Company, filter: DeliveryFilter = {}): Prisma.WebhookDeliveryWhereInput => ({
  companyId: company.id,
  ...(filter.status?.length ? { status: { in: filter.status } } : {}),
  ...(filter.eventId ? { eventId: filter.eventId } : {}),
});

/** Newest first, ties by id: the order of every delivery list. */
export const deliveryListOrder = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.WebhookDeliveryOrderByWithRelationInput[];

/** Newest first; `after` is the last id of the previous page. */
export async function listDeliveries(deps: WebhookDeps, company: Company, q: z.output<typeof deliveryListSchema>) {
  const rows = await deps.db.webhookDelivery.findMany({
    where: deliveryListWhere(company, { status: q.status ? [q.status] : undefined, eventId: q.eventId }),
    include: deliveryInclude,
    orderBy: deliveryListOrder,
    ...pageArgs('id', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (d) => d.id);
  return { deliveries: page, nextCursor };
}

export async function getDelivery(deps: WebhookDeps, company: Company, id: string): Promise<DeliveryRecord> {
  const row = z.uuid().safeParse(id).success ? await deps.db.webhookDelivery.findUnique({ where: { id }, include: deliveryInclude }) : null;
  if (!row || row.companyId !== company.id) throw new NotFoundError(`No webhook delivery with id ${id}`);
  return row;
}

/** A fresh delivery of one event to the current URL; the receiver sees the same webhook-id as before. */
export async function redeliverEvent(deps: WebhookDeps, company: Company, eventId: string): Promise<DeliveryRecord> {
  const event = z.uuid().safeParse(eventId).success ? await deps.db.event.findUnique({ where: { id: eventId } }) : null;
  if (!event || event.companyId !== company.id || deps.internalEventTypes.includes(event.type)) throw new NotFoundError(`No event with id ${eventId}`);
  const { webhookUrl } = await requireEndpoint(deps, company);
  const delivery = await deps.db.webhookDelivery.create({
    data: { id: randomUUID(), eventId, companyId: company.id, url: webhookUrl, seq: event.seq, status: 'pending', nextAttemptAt: await deps.clock.now(company.id) },
    include: deliveryInclude,
  });
  deps.wake();
  return delivery;
}

export const redeliverFailedSchema = z.object({ since: instant });

/** Redelivers every event whose latest delivery failed since the given time. */
export async function redeliverFailed(
  deps: WebhookDeps,
  company: Company,
  { since }: z.output<typeof redeliverFailedSchema>,
): Promise<{ redelivered: number }> {
  const { webhookUrl } = await requireEndpoint(deps, company);
  const failed = await deps.db.webhookDelivery.findMany({
    where: { companyId: company.id, status: 'failed', updatedAt: { gte: since } },
    select: { eventId: true, seq: true },
    orderBy: { seq: 'asc' },
  });
  const events = new Map(failed.map((f) => [f.eventId, f.seq]));
  // Skip events that already have a delivery under way or done after the failure.
  const settled = await deps.db.webhookDelivery.findMany({
    where: { companyId: company.id, eventId: { in: [...events.keys()] }, status: { in: ['pending', 'delivered'] } },
    select: { eventId: true },
  });
  for (const s of settled) events.delete(s.eventId);
  const now = await deps.clock.now(company.id);
  await deps.db.webhookDelivery.createMany({
    data: [...events].map(([eventId, seq]) => ({ id: randomUUID(), eventId, companyId: company.id, url: webhookUrl, seq, status: 'pending', nextAttemptAt: now })),
  });
  deps.wake();
  return { redelivered: events.size };
}

export const eventsQuerySchema = z.object({
  after: sequenceCursor.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/**
 * Event payloads as stored, numbers with their exact digits (a withdrawal webhook's `amount` is a JSON number:
 * Prisma's JSON parsing would pass it through a float). Keyed by event id.
 */
export async function exactPayloads(db: Db, eventIds: string[]): Promise<Map<string, unknown>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db.$queryRaw<{ id: string; payload: string }[]>`
    SELECT "id", "payload"::text AS "payload" FROM "Event" WHERE "id" IN (${Prisma.join([...new Set(eventIds)])})`;
  return new Map(rows.map((r) => [r.id, parseJsonKeepingNumbers(r.payload)]));
}

/** Catch-up feed: every event of the company in order, after a cursor (exclusive); the service's internal ones left out. */
export async function listEvents(deps: WebhookDeps, company: Company, q: z.output<typeof eventsQuerySchema>) {
  const rows = await deps.db.event.findMany({
    where: { companyId: company.id, type: { notIn: [...deps.internalEventTypes] }, ...(q.after !== undefined ? { seq: { gt: q.after } } : {}) },
    orderBy: { seq: 'asc' },
    take: q.limit,
  });
  const payloads = await exactPayloads(deps.db, rows.map((e) => e.id));
  return {
    events: rows.map((e) => ({ id: e.id, cursor: e.seq.toString(), type: e.type, createdAt: e.createdAt.toISOString(), payload: payloads.get(e.id) })),
    nextCursor: rows.at(-1)?.seq.toString() ?? q.after?.toString() ?? null,
  };
}

/** Deletes finished deliveries (and their attempts) older than the retention period. */
export async function pruneDeliveries(db: Db, olderThan: Date): Promise<number> {
  const { count } = await db.webhookDelivery.deleteMany({ where: { status: { in: ['delivered', 'failed'] }, updatedAt: { lt: olderThan } } });
  return count;
}
