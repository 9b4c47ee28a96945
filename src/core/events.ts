// The transactional outbox for every kind of event: a state change records its event (and, when the merchant has a
// webhook URL, the event's delivery) in its own transaction, so both commit together or not at all. Payload
// builders live with their feature; this module knows no event type.
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import { jsonText } from './json.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';

type Tx = Prisma.TransactionClient;

/** What an event is about, e.g. `{ type: 'invoice', id }`. */
export interface EventSubject {
  type: string;
  id: string | null;
}

export interface NewEvent {
  /** e.g. `invoice.done`, `withdrawal.processing`, `invoice.late_payment`. */
  type: string;
  companyId: string;
  subject: EventSubject;
  /** Exactly the webhook body; its key order is kept. A JsonNumber value is written as a number with its exact digits. */
  payload: Record<string, unknown>;
  /**
   * Queue a webhook delivery when the company has a URL (default). Events outside the spec's webhook table pass
   * false: they are recorded for the polling feed and the event bus, not pushed.
   */
  deliver?: boolean;
}

/**
 * The event and its delivery as common table expressions, for a statement that also makes the state change
 * (`WITH change AS (...), ${eventCtes(e)} SELECT ...`): one statement is atomic without a transaction.
 */
export function eventCtes(event: NewEvent): Prisma.Sql {
  const row = Prisma.sql`${randomUUID()}, ${event.companyId}::uuid, ${event.type}, ${event.subject.type}, ${event.subject.id}, ${jsonText(event.payload)}::json`;
  const insert = Prisma.sql`INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload") VALUES (${row})`;
  if (event.deliver === false) return Prisma.sql`recorded_event AS (${insert})`;
  return Prisma.sql`recorded_event AS (${insert} RETURNING "id", "seq", "companyId"),
    queued_delivery AS (
      INSERT INTO "WebhookDelivery" ("id", "eventId", "companyId", "url", "seq", "status", "nextAttemptAt")
      SELECT gen_random_uuid(), e."id", e."companyId", c."webhookUrl", e."seq", 'pending', now()
      FROM recorded_event e JOIN "Company" c ON c."id" = e."companyId"
      WHERE c."webhookUrl" IS NOT NULL)`;
}

/** Records an event in the caller's transaction; one statement with its delivery. */
export async function recordEvent(tx: Tx, event: NewEvent): Promise<void> {
  await tx.$executeRaw`WITH ${eventCtes(event)} SELECT 1`;
  noteEvents(tx, [event.type]);
}

/**
 * Several events (and their deliveries) as common table expressions for a statement that also makes the state
 * change; their seq follows the list order. `where` (over the alias `ev`, e.g. `ev."subjectId"`) keeps only the
 * events whose change happened, so a conditional change and its events stay one atomic statement.
 */
export function eventsCtes(events: NewEvent[], where: Prisma.Sql = Prisma.sql`TRUE`): Prisma.Sql {
  // One array per column: the same statement text for any number of events (a named statement keeps one shape).
  const column = <T>(pick: (e: NewEvent) => T) => events.map(pick);
  // Rows are inserted in the order ORDER BY gives, so each takes its seq in list order.
  return Prisma.sql`ev_rows ("n", "id", "companyId", "type", "subjectType", "subjectId", "payload", "deliver") AS (
      SELECT u."n"::int, u."id", u."companyId", u."type", u."subjectType", u."subjectId", u."payload"::json, u."deliver"
      FROM unnest(${column(() => randomUUID())}::text[], ${column((e) => e.companyId)}::uuid[], ${column((e) => e.type)}::text[],
        ${column((e) => e.subject.type)}::text[], ${column((e) => e.subject.id)}::text[], ${column((e) => jsonText(e.payload))}::text[],
        ${column((e) => e.deliver !== false)}::boolean[]) WITH ORDINALITY AS u("id", "companyId", "type", "subjectType", "subjectId", "payload", "deliver", "n")
    ),
    ev_recorded AS (
      INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload")
      SELECT ev."id", ev."companyId", ev."type", ev."subjectType", ev."subjectId", ev."payload" FROM ev_rows ev WHERE ${where} ORDER BY ev."n"
      RETURNING "id", "seq", "companyId"
    ),
    ev_queued AS (
      INSERT INTO "WebhookDelivery" ("id", "eventId", "companyId", "url", "seq", "status", "nextAttemptAt")
      SELECT gen_random_uuid(), e."id", e."companyId", c."webhookUrl", e."seq", 'pending', now()
      FROM ev_recorded e JOIN ev_rows ev ON ev."id" = e."id" JOIN "Company" c ON c."id" = e."companyId"
      WHERE c."webhookUrl" IS NOT NULL AND ev."deliver"
    )`;
}

/**
 * Told after a transaction that recorded events committed, so they are published at once (the event bus), with the
 * types of the events it recorded when known: the committing process counts the status changes among them, once
 * (metrics; several instances summed never count one change twice).
 */
export interface CommitSignal {
  committed(types?: readonly string[]): void;
}

export interface EventDeps {
  db: Db;
  events: CommitSignal;
}

// Event types noted in the open attempt of a commitWithEvents transaction (Prisma passes the same client object to
// every call inside one); a retried attempt starts a new list, so only the attempt that committed counts.
const notedByTx = new WeakMap<object, string[]>();

/**
 * Notes that the transaction `tx` recorded events of these types: they count as committed status changes once it
 * commits. recordEvent notes its own event; statements that write events through eventCtes/eventsCtes note them
 * here. Outside commitWithEvents (no transaction it knows) nothing is noted: such callers pass the types to
 * `committed()` themselves.
 */
export function noteEvents(tx: Tx, types: readonly string[]): void {
  notedByTx.get(tx)?.push(...types);
}

/**
 * Runs a state change that records events (retried on deadlock or serialization failure) and signals the bus
 * once it committed. `fn` must only touch the database: it may run again.
 */
export async function commitWithEvents<T>(deps: EventDeps, fn: (tx: Tx) => Promise<T>): Promise<T> {
  let noted: string[] = [];
  const result = await transactionWithRetry(deps.db, (tx) => {
    notedByTx.set(tx, (noted = []));
    return fn(tx);
  });
  deps.events.committed(noted);
  return result;
}
