// Turns committed events into e-mail deliveries. It reads the Event table from its own position (EmailCursor, in the
// event bus's (txid, seq) order), so it needs no signal to be complete: a rolled-back change has no event and sends
// nothing, and an event committed while the process was down is planned when it comes back. Events above the cursor
// are planned as soon as they are visible and marked (EmailPlanned); the cursor moves up only past what is final
// (below the oldest open transaction), and the marks below it are dropped. The deliveries, the marks and the cursor
// commit together; the cursor row's lock keeps two processes from planning the same events (and the unique
// (event, kind, recipient) would drop a duplicate anyway). The caps against mail-bombing are counted here.
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import { isAfter, presentPosition, readEvents, type BusCursor, type BusMessage } from '../core/bus.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { DEFAULT_SETTINGS, EMAIL_EVENT_TYPES, planFor, type NotificationSettings, type PlannedEmail } from './kinds.ts';

const CURSOR_ID = 'emails';
const BATCH = 200;
const END: BusCursor = { txid: 2n ** 63n - 1n, seq: 2n ** 63n - 1n };

export interface Caps {
  maxPerInvoice: number;
  maxPerRecipientPerDay: number;
  maxPerMerchantPerHour: number;
}

interface Row extends PlannedEmail {
  eventId: string;
  companyId: string;
  invoiceId: string | null;
}

export class EmailPlanner {
  constructor(
    private readonly deps: { db: Db; logger: Logger; caps: Caps; sending: boolean; planned: () => void },
  ) {}

  /** Plans every event committed so far; answers how many deliveries it recorded. */
  async run(): Promise<number> {
    let recorded = 0;
    for (;;) {
      const step = await this.step();
      recorded += step.recorded;
      if (!step.more) break;
    }
    if (recorded > 0) this.deps.planned();
    return recorded;
  }

  private async step(): Promise<{ recorded: number; more: boolean }> {
    const { db } = this.deps;
    // Every transaction below this position has ended: what it committed is visible now.
    const present = await presentPosition(db);
    const cursor = await db.emailCursor.findUnique({ where: { id: CURSOR_ID } });
    if (!cursor) {
      // The migration writes it; a missing row starts at the present.
      await db.emailCursor.createMany({ data: [{ id: CURSOR_ID, txid: present.txid, seq: present.seq }], skipDuplicates: true });
      return { recorded: 0, more: true };
    }
    const after: BusCursor = { txid: cursor.txid, seq: cursor.seq };
    // Every committed event above the cursor not planned yet, without waiting for older transactions to end (the
    // bus waits for them; a long transaction anywhere on the database would hold e-mails back).
    const { messages, full } = await readEvents(db, {
      after,
      upto: END,
      limit: BATCH,
      where: Prisma.sql`x."type" = ANY(${EMAIL_EVENT_TYPES}::text[]) AND NOT EXISTS (SELECT 1 FROM "EmailPlanned" p WHERE p."eventId" = x."id")`,
    });
    // The cursor moves up to what is final: below the present everything has been read; with a full page, up to its
    // last event at most.
    const last = messages.at(-1);
    let next: BusCursor = full && last && isAfter(present, last) ? { txid: last.txid, seq: last.seq } : present;
    if (!isAfter(next, after)) next = after;
    if (messages.length === 0 && next === after) return { recorded: 0, more: false };
    const rows = this.deps.sending && messages.length ? await this.plan(messages) : [];
    const recorded = await transactionWithRetry(db, async (tx) => {
      const [locked] = await tx.$queryRaw<{ txid: bigint; seq: bigint }[]>`SELECT "txid", "seq" FROM "EmailCursor" WHERE "id" = ${CURSOR_ID} FOR UPDATE`;
      // Another process planned meanwhile: read again.
      if (!locked || locked.txid !== after.txid || locked.seq !== after.seq) return -1;
      const marked = messages.length
        ? await tx.$queryRaw<{ eventId: string }[]>`
            INSERT INTO "EmailPlanned" ("eventId", "txid", "seq")
            SELECT * FROM unnest(${messages.map((m) => m.eventId)}::text[], ${messages.map((m) => m.txid)}::bigint[], ${messages.map((m) => m.seq)}::bigint[])
            ON CONFLICT DO NOTHING RETURNING "eventId"`
        : [];
      const fresh = new Set(marked.map((m) => m.eventId));
      let n = 0;
      for (const row of rows) if (fresh.has(row.eventId)) n += await insertDelivery(tx, row, this.deps.caps);
      if (next !== after) {
        await tx.emailCursor.update({ where: { id: CURSOR_ID }, data: { txid: next.txid, seq: next.seq } });
        // Marks at or below the cursor are no longer needed: the cursor covers those events. An index range over the
        // marks' own positions: a scan of every mark with an Event lookup each took 3 ms a step under load.
        await tx.$executeRaw`DELETE FROM "EmailPlanned" WHERE ("txid", "seq") <= (${next.txid}, ${next.seq})`;
      }
      return n;
    });
    return { recorded: Math.max(0, recorded), more: full || recorded < 0 };
  }

  /** The deliveries of these events, with what they need read in two queries. */
  private async plan(messages: BusMessage[]): Promise<Row[]> {
    const { db } = this.deps;
    const invoiceIds = [...new Set(messages.filter((m) => m.subject.type === 'invoice' && m.subject.id).map((m) => m.subject.id!))];
    const companyIds = [...new Set(messages.map((m) => m.companyId))];
    const [invoices, settings] = await Promise.all([
      db.invoice.findMany({ where: { id: { in: invoiceIds } }, select: { id: true, clientEmail: true, lang: true } }),
      db.notificationSettings.findMany({ where: { companyId: { in: companyIds } } }),
    ]);
    const invoiceById = new Map(invoices.map((i) => [i.id, i]));
    const settingsOf = new Map<string, NotificationSettings>(settings.map((s) => [s.companyId, s]));
    return messages.flatMap((m) => {
      const invoice = m.subject.type === 'invoice' && m.subject.id ? (invoiceById.get(m.subject.id) ?? null) : null;
      return planFor(m, invoice, settingsOf.get(m.companyId) ?? DEFAULT_SETTINGS).map((p) => ({
        ...p,
        eventId: m.eventId,
        companyId: m.companyId,
        invoiceId: invoice?.id ?? null,
      }));
    });
  }
}

/**
 * One delivery, pending or, over a cap, suppressed (recorded and listed, never sent). Caps count what was recorded
 * and not suppressed. Answers 1 when a row was written (0: this event already has it).
 */
async function insertDelivery(tx: Prisma.TransactionClient, row: Row, caps: Caps): Promise<number> {
  const capped = Prisma.sql`CASE
      WHEN ${row.client} AND ${row.invoiceId}::text IS NOT NULL AND (SELECT count(*) FROM "EmailDelivery" d
        WHERE d."invoiceId" = ${row.invoiceId} AND d."kind" LIKE 'client.%' AND d."status" <> 'suppressed') >= ${caps.maxPerInvoice}
        THEN 'suppressed: more than EMAIL_MAX_PER_INVOICE (' || ${caps.maxPerInvoice}::text || ') client e-mails about this invoice'
      WHEN ${row.client} AND (SELECT count(*) FROM "EmailDelivery" d WHERE d."companyId" = ${row.companyId}::uuid AND lower(d."recipient") = lower(${row.recipient})
        AND d."kind" LIKE 'client.%' AND d."createdAt" > now() - interval '1 day' AND d."status" <> 'suppressed') >= ${caps.maxPerRecipientPerDay}
        THEN 'suppressed: more than EMAIL_MAX_PER_RECIPIENT_PER_DAY (' || ${caps.maxPerRecipientPerDay}::text || ') e-mails to this address in 24 hours'
      WHEN (SELECT count(*) FROM "EmailDelivery" d WHERE d."companyId" = ${row.companyId}::uuid
        AND d."createdAt" > now() - interval '1 hour' AND d."status" <> 'suppressed') >= ${caps.maxPerMerchantPerHour}
        THEN 'suppressed: more than EMAIL_MAX_PER_MERCHANT_PER_HOUR (' || ${caps.maxPerMerchantPerHour}::text || ') e-mails in an hour'
    END`;
  return tx.$executeRaw`
    WITH c AS (SELECT ${capped} AS "reason")
    INSERT INTO "EmailDelivery" ("id", "eventId", "companyId", "invoiceId", "kind", "recipient", "lang", "status", "nextAttemptAt", "lastError")
    SELECT ${randomUUID()}::uuid, ${row.eventId}, ${row.companyId}::uuid, ${row.invoiceId}, ${row.kind}, ${row.recipient}, ${row.lang},
      CASE WHEN c."reason" IS NULL THEN 'pending' ELSE 'suppressed' END, now(), c."reason"
    FROM c
    ON CONFLICT ("eventId", "kind", "recipient") DO NOTHING`;
}
