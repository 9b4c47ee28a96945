// The event bus: every committed event, once, as a typed message, to every subscriber of this process (the
// webhook worker, live subscriptions). It is driven by the Event table, not by the code that wrote the event, so
// a rolled-back change is never published and a committed one always is, whichever process committed it.
//
// Order and completeness: events are read in (txid, seq) order and only below the oldest transaction still
// running (its snapshot's xmin). A transaction that is still open may yet commit events with a lower seq than
// ones already visible; waiting for the horizon to pass it is what keeps them from being skipped. Every writer
// of a subject's events takes the subject's row lock first, so one subject's events keep their commit order.
import type { Db } from '../db/client.ts';
import type { Notifications } from '../db/notifications.ts';
import type { Logger } from '../logger.ts';
import type { CommitSignal, EventSubject } from './events.ts';

export interface BusMessage {
  /** The event's position in the company's feed (`GET /api/company/events` cursor). */
  seq: bigint;
  eventId: string;
  type: string;
  companyId: string;
  subject: EventSubject;
  payload: unknown;
  createdAt: Date;
}

export type BusListener = (message: BusMessage) => void;

interface Row {
  id: string;
  seq: bigint;
  txid: bigint;
  type: string;
  companyId: string;
  subjectType: string;
  subjectId: string | null;
  payload: unknown;
  createdAt: Date;
  horizon: bigint;
}

export const EVENTS_CHANNEL = 'payrail_events';
const MAX_BIGINT = 2n ** 63n - 1n;

export interface BusOptions {
  /** Reads without a signal, for signals that were lost (a dropped LISTEN connection). */
  pollMs: number;
  /** Rows per read. */
  batchSize?: number;
  /** Reads closer together than this are merged (a burst of commits costs few reads). */
  minGapMs?: number;
}

export class EventBus implements CommitSignal {
  private readonly listeners = new Set<BusListener>();
  private cursor: { txid: bigint; seq: bigint } | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private poller: NodeJS.Timeout | null = null;
  private signalTimer: NodeJS.Timeout | null = null;
  private lastReadAt = 0;
  private running = false;

  constructor(
    private readonly deps: { db: Db; notifications: Notifications; logger: Logger },
    private readonly options: BusOptions,
  ) {}

  subscribe(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts at the present: what committed before is history (the events feed serves it). */
  async start(): Promise<void> {
    const [row] = await this.deps.db.$queryRaw<{ horizon: bigint }[]>`
      SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS "horizon"`;
    this.cursor = { txid: row!.horizon - 1n, seq: MAX_BIGINT };
    this.running = true;
    await this.deps.notifications.listen(EVENTS_CHANNEL, () => this.schedule());
    this.poller = setInterval(() => this.schedule(), this.options.pollMs);
    this.poller.unref();
  }

  /** This process committed events: read them now, and tell the other processes (signals are merged). */
  committed(): void {
    this.schedule();
    this.signalTimer ??= setTimeout(() => {
      this.signalTimer = null;
      this.deps.notifications.signal(EVENTS_CHANNEL).catch((e: unknown) => this.deps.logger.warn({ err: e }, 'could not signal other processes; they poll'));
    }, this.options.minGapMs ?? 10);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.poller) clearInterval(this.poller);
    if (this.timer) clearTimeout(this.timer);
    if (this.signalTimer) clearTimeout(this.signalTimer);
    this.timer = this.signalTimer = this.poller = null;
    await this.reading;
  }

  /** Reads now, or right after the read in progress, or after the minimum gap. */
  private schedule(delayMs = 0): void {
    if (!this.running) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(delayMs, this.lastReadAt + (this.options.minGapMs ?? 10) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reading = this.read()
        .catch((e: unknown) => {
          this.deps.logger.error({ err: e }, 'event bus read failed; retrying in a second');
          return 'failed' as const;
        })
        .then((outcome) => {
          this.reading = null;
          if (outcome === 'more' || this.again) {
            this.again = false;
            this.schedule();
          } else if (outcome === 'blocked') {
            // Committed events wait behind an open transaction: look again shortly.
            this.schedule(20);
          } else if (outcome === 'failed') {
            this.schedule(1000);
          }
        });
    }, Math.max(0, wait));
  }

  private async read(): Promise<'done' | 'more' | 'blocked'> {
    this.lastReadAt = Date.now();
    const cursor = this.cursor!;
    const limit = this.options.batchSize ?? 500;
    // Only rows below the horizon come back; `waiting` says whether committed rows above it wait for an older
    // transaction to end (then the bus looks again shortly, without fetching them each time).
    const rows = await this.deps.db.$queryRaw<(Row & { waiting: boolean })[]>`
      WITH h AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS "horizon")
      SELECT e."id", e."seq", e."txid", e."type", e."companyId"::text AS "companyId", e."subjectType", e."subjectId",
             e."payload", e."createdAt", h."horizon", false AS "waiting"
      FROM (SELECT * FROM "Event" x WHERE (x."txid", x."seq") > (${cursor.txid}, ${cursor.seq})
              AND x."txid" < (SELECT "horizon" FROM h)
            ORDER BY x."txid", x."seq" LIMIT ${limit}) e, h
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, h."horizon", true
      FROM h WHERE EXISTS (SELECT 1 FROM "Event" w WHERE w."txid" >= h."horizon")
      ORDER BY "waiting", "txid", "seq"`;
    const events = rows.filter((r) => !r.waiting);
    for (const row of events) {
      this.cursor = { txid: row.txid, seq: row.seq };
      this.publish({
        seq: row.seq,
        eventId: row.id,
        type: row.type,
        companyId: row.companyId,
        subject: { type: row.subjectType, id: row.subjectId },
        payload: row.payload,
        createdAt: row.createdAt,
      });
    }
    if (events.length === limit) return 'more';
    return rows.some((r) => r.waiting) ? 'blocked' : 'done';
  }

  private publish(message: BusMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (e) {
        this.deps.logger.error({ err: e, type: message.type }, 'an event bus subscriber failed');
      }
    }
  }
}
