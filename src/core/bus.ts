// The event bus: every committed event, once, as a typed message, to every subscriber of this process (the
// webhook worker, live subscriptions). It is driven by the Event table, not by the code that wrote the event, so
// a rolled-back change is never published and a committed one always is, whichever process committed it.
//
// Order and completeness: events are read in (txid, seq) order and only below the oldest transaction still
// running (its snapshot's xmin). A transaction that is still open may yet commit events with a lower seq than
// ones already visible; waiting for the horizon to pass it is what keeps them from being skipped. Every writer
// of a subject's events takes the subject's row lock first, so one subject's events keep their commit order.
//
// Several instances: without a fan-out every process reads the table itself. With one (Redis, src/core/fanout.ts)
// one process at a time, the relay (a lease in EventRelay), reads the table and publishes batches; every process
// delivers what the batches carry. Each batch names the position it follows (`prev`): a process that missed
// something (a dropped Redis connection, a relay change) reads the gap from the table before delivering more,
// and one that hears nothing for a while reads the table itself until batches come again.
import { Prisma } from '../../generated/prisma/client.ts';
import { prepared } from '../db/prepared.ts';
import type { Db } from '../db/client.ts';
import type { Notifications } from '../db/notifications.ts';
import type { Logger } from '../logger.ts';
import type { CommitSignal, EventSubject } from './events.ts';
import { Leases, type Lease } from './lease.ts';

/** A position in the bus's order: every event up to and including (txid, seq). */
export interface BusCursor {
  txid: bigint;
  seq: bigint;
}

export interface BusMessage extends BusCursor {
  /** The event's position in the company's feed (`GET /api/company/events` cursor). */
  seq: bigint;
  /** The writing transaction (with seq: the message's place on the bus). */
  txid: bigint;
  eventId: string;
  type: string;
  companyId: string;
  subject: EventSubject;
  payload: unknown;
  createdAt: Date;
}

export type BusListener = (message: BusMessage) => void;

/** What one relay read carries: the messages after `prev`, up to and including `upto`. */
export interface BusBatch {
  prev: BusCursor;
  upto: BusCursor;
  messages: BusMessage[];
}

/** Carries relay batches to every process (Redis pub/sub); at most once, in order per connection. */
export interface BusFanout {
  publish(batch: BusBatch): void;
  /** Resolves once batches published from now on reach `onBatch`. */
  subscribe(onBatch: (batch: BusBatch) => void): Promise<void>;
  close(): Promise<void>;
}

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
}

export const EVENTS_CHANNEL = 'payrail_events';
const MAX_BIGINT = 2n ** 63n - 1n;
const DEFAULT_BATCH = 500;

export const isAfter = (a: BusCursor, b: BusCursor): boolean => a.txid > b.txid || (a.txid === b.txid && a.seq > b.seq);
const cursorOf = (c: BusCursor): BusCursor => ({ txid: c.txid, seq: c.seq });

const toMessage = (row: Row): BusMessage => ({
  seq: row.seq,
  txid: row.txid,
  eventId: row.id,
  type: row.type,
  companyId: row.companyId,
  subject: { type: row.subjectType, id: row.subjectId },
  payload: row.payload,
  createdAt: row.createdAt,
});

/** The position before every event not committed yet: what committed before it is history. */
export async function presentPosition(db: Db): Promise<BusCursor> {
  const [row] = await db.$queryRaw<{ horizon: bigint }[]>`SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS "horizon"`;
  return { txid: row!.horizon - 1n, seq: MAX_BIGINT };
}

/**
 * Committed events after `after` in bus order, at most `limit`: up to the horizon (and then `waiting` says whether
 * committed events wait above it for an older transaction), or up to `upto`, a position the bus already reached
 * (everything at or below it is final). `where` narrows them (alias `x`), e.g. to one company's events.
 */
export async function readEvents(
  db: Db,
  range: { after: BusCursor; upto?: BusCursor; limit?: number; where?: Prisma.Sql },
): Promise<{ messages: BusMessage[]; full: boolean; waiting: boolean }> {
  const { after, upto } = range;
  const limit = range.limit ?? DEFAULT_BATCH;
  const where = range.where ?? Prisma.sql`TRUE`;
  if (upto) {
    const rows = await db.$queryRaw<Row[]>`
      SELECT x."id", x."seq", x."txid", x."type", x."companyId"::text AS "companyId", x."subjectType", x."subjectId", x."payload", x."createdAt"
      FROM "Event" x
      WHERE (x."txid", x."seq") > (${after.txid}, ${after.seq}) AND (x."txid", x."seq") <= (${upto.txid}, ${upto.seq}) AND ${where}
      ORDER BY x."txid", x."seq" LIMIT ${limit}`;
    return { messages: rows.map(toMessage), full: rows.length === limit, waiting: false };
  }
  // Named (db/prepared.ts): it runs on every wake-up. Only rows below the horizon come back; `waiting` says whether
  // committed rows above it wait for an older transaction to end (then the bus looks again shortly, without fetching
  // them each time).
  const rows = await db.$queryRaw<(Row & { waiting: boolean })[]>(prepared(Prisma.sql`
    WITH h AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS "horizon")
    SELECT e."id", e."seq", e."txid", e."type", e."companyId"::text AS "companyId", e."subjectType", e."subjectId",
           e."payload", e."createdAt", false AS "waiting"
    FROM (SELECT * FROM "Event" x WHERE (x."txid", x."seq") > (${after.txid}, ${after.seq})
            AND x."txid" < (SELECT "horizon" FROM h) AND ${where}
          ORDER BY x."txid", x."seq" LIMIT ${limit}) e
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true
    FROM h WHERE EXISTS (SELECT 1 FROM "Event" w WHERE w."txid" >= h."horizon")
    ORDER BY "waiting", "txid", "seq"`));
  const messages = rows.filter((r) => !r.waiting).map(toMessage);
  return { messages, full: messages.length === limit, waiting: rows.some((r) => r.waiting) };
}

/** How many events of `range` there are, counting no further than `limit` (a bounded check before a replay). */
export async function countEvents(db: Db, range: { after: BusCursor; upto: BusCursor; limit: number; where: Prisma.Sql }): Promise<number> {
  const { after, upto } = range;
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS "n" FROM (
      SELECT 1 FROM "Event" x
      WHERE (x."txid", x."seq") > (${after.txid}, ${after.seq}) AND (x."txid", x."seq") <= (${upto.txid}, ${upto.seq}) AND ${range.where}
      LIMIT ${range.limit}) c`;
  return row!.n;
}

type Outcome = 'done' | 'more' | 'blocked';

/**
 * Runs `step` now, or right after the run in progress, or after the minimum gap; again at once while it says
 * 'more', shortly while events wait behind an open transaction, after a second when it failed.
 */
class Reader {
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private lastReadAt = 0;
  private running = false;

  constructor(
    private readonly step: () => Promise<Outcome>,
    private readonly minGapMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
  }

  schedule(delayMs = 0): void {
    if (!this.running) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(delayMs, this.lastReadAt + this.minGapMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.lastReadAt = Date.now();
      this.reading = this.step()
        .catch((e: unknown) => {
          this.logger.error({ err: e }, 'event bus read failed; retrying in a second');
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
}

export interface BusOptions {
  /** Reads without a signal, for signals that were lost (a dropped LISTEN connection); the relay's lease beat. */
  pollMs: number;
  /** Rows per read. */
  batchSize?: number;
  /** Reads closer together than this are merged (a burst of commits costs few reads). */
  minGapMs?: number;
  /** With a fan-out: how long the relay's lease holds without a renewal. Default max(5 s, 3 polls). */
  relayLeaseMs?: number;
}

export class EventBus implements CommitSignal {
  private readonly listeners = new Set<BusListener>();
  /** Every event up to here went to this process's listeners. */
  private delivered: BusCursor = { txid: 0n, seq: 0n };
  private readonly direct: Reader;
  private running = false;
  private poller: NodeJS.Timeout | null = null;
  private signalTimer: NodeJS.Timeout | null = null;
  private readonly minGapMs: number;
  private readonly relay: Relay | null;

  constructor(
    private readonly deps: { db: Db; notifications: Notifications; logger: Logger; fanout?: BusFanout },
    private readonly options: BusOptions,
  ) {
    this.minGapMs = options.minGapMs ?? 10;
    this.direct = new Reader(() => this.readDirect(), this.minGapMs, deps.logger);
    this.relay = deps.fanout ? new Relay(deps.db, deps.fanout, deps.logger, options, (batch) => this.deliverBatch(batch)) : null;
  }

  subscribe(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Every event up to here went to the listeners, none after it: a listener added now gets exactly the events after
   * it (for a reader of the history up to there, e.g. a subscription that resumes).
   */
  position(): BusCursor {
    return cursorOf(this.delivered);
  }

  /** Starts at the present: what committed before is history (the events feed serves it). */
  async start(): Promise<void> {
    this.delivered = await presentPosition(this.deps.db);
    this.running = true;
    this.direct.start();
    await this.relay?.start();
    await this.deps.notifications.listen(EVENTS_CHANNEL, () => this.schedule());
    this.poller = setInterval(() => {
      this.relay?.beat();
      this.schedule();
    }, this.options.pollMs);
    this.poller.unref();
  }

  /** This process committed events: read them now, and tell the other processes (signals are merged). */
  committed(): void {
    this.schedule();
    this.signalTimer ??= setTimeout(() => {
      this.signalTimer = null;
      this.deps.notifications.signal(EVENTS_CHANNEL).catch((e: unknown) => this.deps.logger.warn({ err: e }, 'could not signal other processes; they poll'));
    }, this.minGapMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.poller) clearInterval(this.poller);
    if (this.signalTimer) clearTimeout(this.signalTimer);
    this.signalTimer = this.poller = null;
    await this.relay?.stop();
    await this.direct.stop();
  }

  /** Whether this process relays the table to the fan-out now (diagnostics, tests). */
  get relaying(): boolean {
    return this.relay?.relays() ?? false;
  }

  private schedule(): void {
    if (!this.running) return;
    if (!this.relay) return this.direct.schedule();
    this.relay.schedule();
    // Batches stopped coming (Redis or the relay is down): read the table ourselves meanwhile.
    if (this.relay.silent()) this.direct.schedule();
  }

  /** Reads the table from what this process delivered, up to the horizon or `upto`. */
  private async readDirect(upto?: BusCursor): Promise<Outcome> {
    const { messages, full, waiting } = await readEvents(this.deps.db, { after: this.delivered, upto, limit: this.options.batchSize });
    this.deliver(messages);
    if (full) return 'more';
    // Everything up to `upto` is delivered now, whether or not an event sits right at it.
    if (upto && isAfter(upto, this.delivered)) this.delivered = cursorOf(upto);
    return waiting ? 'blocked' : 'done';
  }

  /** A batch from the fan-out: first what this process missed before it (from the table), then what it carries. */
  private async deliverBatch(batch: BusBatch): Promise<void> {
    while (isAfter(batch.prev, this.delivered) && (await this.readDirect(batch.prev)) === 'more');
    this.deliver(batch.messages);
    if (isAfter(batch.upto, this.delivered)) this.delivered = cursorOf(batch.upto);
  }

  private deliver(messages: BusMessage[]): void {
    for (const message of messages) {
      // Already delivered: a relay change or a direct read got here first.
      if (!isAfter(message, this.delivered)) continue;
      this.delivered = cursorOf(message);
      for (const listener of this.listeners) {
        try {
          listener(message);
        } catch (e) {
          this.deps.logger.error({ err: e, type: message.type }, 'an event bus subscriber failed');
        }
      }
    }
  }
}

const RELAY_ID = 'events';
/** The relay's lease: one row in EventRelay (core/lease.ts). */
const RELAY_LEASE = { table: 'EventRelay', key: 'id', keyType: 'text', owner: 'owner', ownerType: 'text', until: 'leaseUntil', generation: 'generation', rows: 'created' } as const;

/**
 * The relay side of a fan-out: holds the lease in EventRelay while it can (one process at a time), reads the table
 * from where it started and publishes batches; and the receiving side: hands every batch, in arrival order, to
 * `onBatch`, and says when none came for a while.
 */
class Relay {
  private readonly leases: Leases;
  private lease: Lease | null = null;
  /**
   * Until when (process time) the lease surely holds: its length counted from before the statement that took or
   * renewed it. Publishing stops there even if a beat is late, since another process may take over after it.
   */
  private holdsUntil = 0;
  private readonly silentAfterMs: number;
  private readonly reader: Reader;
  /** The position the relay has published up to (while holding). */
  private position: BusCursor | null = null;
  private lastPublishAt = 0;
  private lastBatchAt = Date.now();
  private warnedSilent = false;
  private queue: Promise<void> = Promise.resolve();
  private renewing: Promise<void> | null = null;
  holding = false;

  constructor(
    private readonly db: Db,
    private readonly fanout: BusFanout,
    private readonly logger: Logger,
    private readonly options: BusOptions,
    private readonly onBatch: (batch: BusBatch) => Promise<void>,
  ) {
    const leaseMs = options.relayLeaseMs ?? Math.max(5_000, options.pollMs * 3);
    this.leases = new Leases(RELAY_LEASE, leaseMs);
    this.silentAfterMs = leaseMs + options.pollMs * 2;
    this.reader = new Reader(() => this.readAndPublish(), options.minGapMs ?? 10, logger);
  }

  async start(): Promise<void> {
    await this.fanout.subscribe((batch) => {
      this.lastBatchAt = Date.now();
      if (this.warnedSilent) {
        this.warnedSilent = false;
        this.logger.info('event batches arrive again from the fan-out');
      }
      this.queue = this.queue.then(() => this.onBatch(batch)).catch((e: unknown) => this.logger.error({ err: e }, 'could not deliver an event batch; the next one reads the gap'));
    });
    this.reader.start();
    await this.renew();
  }

  async stop(): Promise<void> {
    await this.renewing;
    await this.reader.stop();
    const lease = this.lease;
    this.holding = false;
    this.lease = null;
    // Another process takes over at its next beat instead of after the lease.
    if (lease) await this.leases.release(this.db, lease).catch(() => undefined);
    await this.queue;
  }

  schedule(): void {
    if (this.holding) this.reader.schedule();
  }

  /** Holds the lease and surely still within it: then, and only then, it publishes. */
  relays(): boolean {
    return this.holding && Date.now() < this.holdsUntil;
  }

  /** Every poll: keep or take the lease. */
  beat(): void {
    this.renewing ??= this.renew().finally(() => (this.renewing = null));
  }

  /** No batch for longer than a relay change takes: Redis or the relay is down. */
  silent(): boolean {
    const silent = Date.now() - this.lastBatchAt > this.silentAfterMs;
    if (silent && !this.warnedSilent) {
      this.warnedSilent = true;
      this.logger.warn({ silentMs: Date.now() - this.lastBatchAt }, 'no event batches from the fan-out; reading the event table directly meanwhile');
    }
    return silent;
  }

  private async renew(): Promise<void> {
    try {
      const asked = Date.now();
      const lease = await this.leases.acquire(this.db, RELAY_ID);
      if (lease) this.holdsUntil = asked + this.leases.leaseMs;
      // A new generation is a new relay, even here (the lease was lost and taken back between two beats): it starts
      // at the present; receivers read whatever lies between from the table (the gap rule).
      if (lease && (!this.holding || lease.generation !== this.lease?.generation)) {
        this.holding = false;
        this.position = await presentPosition(this.db);
        this.logger.info('this process relays events to the fan-out');
      } else if (!lease && this.holding) {
        this.logger.warn('another process took over relaying events');
      }
      this.lease = lease;
      this.holding = lease !== null;
    } catch (e) {
      // Without a renewed lease another process may take over: stop publishing rather than publish twice.
      this.holding = false;
      this.lease = null;
      this.logger.warn({ err: e }, 'could not renew the event relay lease');
    }
    if (this.holding) this.reader.schedule();
  }

  private async readAndPublish(): Promise<Outcome> {
    const prev = this.position;
    if (!this.relays() || !prev) return 'done';
    const { messages, full, waiting } = await readEvents(this.db, { after: prev, limit: this.options.batchSize });
    // A quiet relay still says where it stands once per poll, so receivers notice a gap without new events.
    if (messages.length > 0 || Date.now() - this.lastPublishAt >= this.options.pollMs) {
      const upto = messages.length ? cursorOf(messages.at(-1)!) : prev;
      this.fanout.publish({ prev, upto, messages });
      this.position = upto;
      this.lastPublishAt = Date.now();
    }
    return full ? 'more' : waiting ? 'blocked' : 'done';
  }
}
