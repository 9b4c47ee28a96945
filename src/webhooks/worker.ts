// Delivers webhooks from the outbox. Claims due deliveries with a lease and hands them to one lane per company
// endpoint. A lane is leased too (a named lease of core/lease.ts on WebhookLane, taken in the claim statement): one
// worker, in any process, serves an endpoint at a time, so no delivery is taken twice and an endpoint's order holds
// across processes; the lane's writes (claims handed back, attempts recorded) are fenced by its generation. A
// lane starts its attempts in event order, each once the one `pipeline` places before it is recorded; attempts of
// all lanes are recorded together (AttemptRecorder: one statement per round trip, asynchronous commit). Lanes stay
// open while they have work and are refilled by later claims, so a busy endpoint keeps its lane. A slow endpoint
// holds only its own lane; after a failure a lane starts nothing more and hands back the rest of its deliveries.
// Every attempt goes to the company's current URL, so fixing a URL heals retries. Guarantees: docs/webhooks.md.
import { isPlanted } from '../core/plant.ts';
import { randomUUID } from 'node:crypto';
import { Leases } from '../core/lease.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../clock.ts';
import { prepared } from '../db/prepared.ts';
import type { Db } from '../db/client.ts';
import type { Mode } from '../domain/modes.ts';
import type { Logger } from '../logger.ts';
import type { WebhookMetrics } from './metrics.ts';
import { nextAttemptAt } from './schedule.ts';
import type { SendResult, WebhookSender } from './sender.ts';

const MIN_CLAIM_GAP_MS = 10;
/** A lane's lease: one WebhookLane row per company endpoint (core/lease.ts). */
const LANE_LEASE = {
  table: 'WebhookLane',
  key: 'companyId',
  keyType: 'uuid',
  owner: 'owner',
  ownerType: 'uuid',
  until: 'leaseUntil',
  generation: 'generation',
  rows: 'created',
} as const;
/** Attempt rows per recording statement at most (the rest go in the next one). */
const MAX_RECORD_ROWS = 500;

export interface WorkerOptions {
  /** Endpoints served at once. */
  concurrency: number;
  /** Deliveries claimed per query; also what one lane holds at most, and its turn while others wait for a lane. */
  batchSize: number;
  /** How long a claim holds before another worker may take the delivery (covers one timeout and more). */
  leaseMs: number;
  /** Fallback poll when nothing wakes the worker (other processes' events, retries coming due). */
  pollMs: number;
  /** Attempts per endpoint started and not yet recorded, at most (1: one at a time). Default 4. */
  pipeline?: number;
  /**
   * Record attempts with asynchronous commit (PostgreSQL). Off for an embedded PGlite: it has no WAL writer, so
   * its asynchronous commits reach the disk only with a later synchronous one, and a crash of the server process
   * would lose them all. Default off.
   */
  asyncCommit?: boolean;
}

interface Claimed {
  id: string;
  eventId: string;
  eventCreatedAt: Date;
  companyId: string;
  seq: bigint;
  attempts: number;
  payload: string;
  secretKey: string;
  mode: Mode;
  webhookUrl: string | null;
  /** The company's test clock offset (sandbox): its retries are scheduled on its own time. */
  offsetMs: bigint;
  /** The lane's lease generation the claim was made under. */
  generation: number;
}

/** A claimed delivery's place under its lane's lease: what its fenced writes name. */
interface Held {
  id: string;
  companyId: string;
  /** The lane's generation it was claimed under: its writes land only while the lane still has it. */
  generation: number;
}

interface Prepared extends Held {
  /** Until when our claim holds (real time, ms). */
  leaseUntil: number;
  eventId: string;
  /** When the event was written (its transaction's start, database time): a delivery's lag runs from here. */
  eventCreatedAt: Date;
  url: string;
  seq: bigint;
  attempts: number;
  offsetMs: bigint;
  body: string;
  secretKey: string;
  mode: Mode;
}

/** One company endpoint's deliveries in this worker. */
interface Lane {
  key: string;
  /** The lane's lease generation (WebhookLane.generation) while this worker holds it. */
  generation: number;
  /** Claimed, not started, in seq order. */
  queue: Prepared[];
  /**
   * The sliding window of attempts in start order, at most `pipeline` long: the front leaves once it is recorded
   * (and the ones behind it that are), so an attempt starts only after the one `pipeline` places before it ended.
   */
  window: { done: boolean }[];
  /** Ids queued or in flight: a claim that takes one of them again (its lease ran out in our queue) renews it. */
  held: Set<string>;
  /** Deliveries taken in since the lane opened: while other endpoints wait for a lane, its turn is batchSize. */
  taken: number;
  /** An attempt failed or could not be recorded: start nothing more; hand the queue back once in-flight ones end. */
  halted: boolean;
  /** Done: handing back what it still held; takes nothing more. */
  closing: boolean;
  ended: Promise<void>;
  end: () => void;
}

export class WebhookWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly lanes = new Map<string, Lane>();
  /** This worker's lanes: named leases on WebhookLane, in real time (the deliveries' claims are too). */
  private readonly laneLeases: Leases;
  /**
   * Lanes closed here whose rows are still ours: the next claim frees them (unless it takes them again), so closing
   * a lane costs no statement of its own.
   */
  private readonly closedLanes = new Set<string>();
  private readonly recorder: AttemptRecorder;
  private readonly pipeline: number;
  private readonly lowWater: number;
  /** Time left for recording an attempt after its timeout, within the lease. */
  private readonly recordMarginMs: number;
  private wakeUp: (() => void) | null = null;
  private lastClaimAt = 0;
  /** A wake() that came while the loop was claiming, not sleeping: the next sleep is cut short. */
  private missedWake = false;

  constructor(
    private readonly deps: { db: Db; clock: Clock; logger: Logger; sender: WebhookSender; metrics?: WebhookMetrics },
    private readonly options: WorkerOptions,
  ) {
    this.pipeline = Math.max(1, options.pipeline ?? 4);
    this.lowWater = Math.ceil(options.batchSize / 2);
    this.recordMarginMs = Math.min(5_000, Math.max(0, (options.leaseMs - deps.sender.timeoutMs) / 2));
    this.laneLeases = new Leases(LANE_LEASE, options.leaseMs, randomUUID(), () => deps.clock.real());
    this.recorder = new AttemptRecorder(deps.db, options.asyncCommit ?? false, this.laneLeases);
  }

  /** Claiming and delivering (started, not stopped). */
  get started(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * New deliveries may be due (an event committed, the test clock moved, a lane has room): look soon instead of
   * at the next poll. Wakes within MIN_CLAIM_GAP_MS of the last claim coalesce, so a burst of writes costs few claims.
   */
  wake(): void {
    const wakeUp = this.wakeUp;
    if (!wakeUp) {
      // Claiming right now: that claim may have missed what this wake announces (a lane that just ended, an
      // event committed after the claim's snapshot). Look again right after it instead of at the next poll.
      this.missedWake = true;
      return;
    }
    const wait = this.lastClaimAt + MIN_CLAIM_GAP_MS - Date.now();
    if (wait <= 0 || !this.running) wakeUp();
    else setTimeout(() => this.wakeUp === wakeUp && wakeUp(), wait).unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    // Lanes start nothing more; their attempts in flight end (bounded by the send timeout) and are recorded.
    for (const lane of [...this.lanes.values()]) this.pump(lane);
    await Promise.allSettled([...this.lanes.values()].map((l) => l.ended));
    await this.release([], [...this.closedLanes]);
    this.closedLanes.clear();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      if (this.canClaim()) {
        claimed = await this.claimAndStart().catch((e: unknown) => {
          this.deps.logger.error({ err: e }, 'webhook claim failed');
          return 0;
        });
      }
      // A full batch: more is likely due, look again at once (if a lane has room). Otherwise wait for a wake.
      if (claimed < this.options.batchSize || !this.canClaim()) await this.sleep(this.options.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.missedWake) {
      this.missedWake = false;
      ms = Math.max(0, this.lastClaimAt + MIN_CLAIM_GAP_MS - Date.now());
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private atCapacity(): boolean {
    return this.lanes.size >= this.options.concurrency;
  }

  /**
   * Can this lane take more from a claim? Once half its batch is left (a claim adds at most a batch, so a lane
   * holds at most 1.5 batches: few enough to send well within their lease). At capacity only within its turn, so
   * endpoints waiting for a lane get one.
   */
  private refillable(lane: Lane): boolean {
    return (
      !lane.halted && !lane.closing && lane.queue.length < this.lowWater && (!this.atCapacity() || lane.taken < this.options.batchSize)
    );
  }

  private canClaim(): boolean {
    return !this.atCapacity() || [...this.lanes.values()].some((l) => this.refillable(l));
  }

  private async claimAndStart(): Promise<number> {
    this.lastClaimAt = Date.now();
    // Leases are real time; whether a retry is due is the company's time (its sandbox test clock).
    const now = this.deps.clock.real();
    const leaseUntil = new Date(now.getTime() + this.options.leaseMs);
    const lanes = [...this.lanes.values()];
    const closed = lanes.filter((l) => !this.refillable(l)).map((l) => l.key);
    // At capacity, only endpoints that already have a lane (and room in their turn) can take more.
    const onlyOpen = this.atCapacity()
      ? Prisma.sql`AND d."companyId"::text = ANY(${lanes.filter((l) => this.refillable(l)).map((l) => l.key)}::text[])`
      : Prisma.empty;
    // One statement: the due deliveries of endpoints whose lane is not another's (core/lease.ts: no holder, its
    // lease ended, or ours); those lanes leased to us until `leaseUntil` (ours renewed, keeping their generation);
    // the claim of the deliveries whose lane we got, with that lane's generation. Two workers racing for a lane meet
    // on its row (ON CONFLICT waits for the other's commit and re-checks): the loser takes nothing of that endpoint.
    // Lanes are taken in companyId order, so two claims cannot deadlock. Due rows are not locked: with SKIP LOCKED,
    // rows locked by a claim that then lost the lane would be skipped and later events sent first; the update
    // re-checks them instead. The event and the company come with the claim (one round trip): body, secret, URL.
    // Named (db/prepared.ts): it runs on every wake-up, and planning it cost more than running it.
    const at = { now: Prisma.sql`${now}::timestamptz`, until: Prisma.sql`${leaseUntil}::timestamptz` };
    const claimable = Prisma.sql`d."status" = 'pending' AND (d."claimedUntil" IS NULL OR d."claimedUntil" < ${at.now})`;
    // Lanes closed here since the last claim are handed back, but for those this claim takes again (one statement
    // must not write a row twice).
    const freeing = [...this.closedLanes];
    const freeClosed = freeing.length
      ? Prisma.sql`, freed AS (${this.laneLeases.releaseKeysSql(freeing, Prisma.sql`NOT EXISTS (SELECT 1 FROM due WHERE due."companyId" = l."companyId")`)})`
      : Prisma.empty;
    const claimed = await this.deps.db.$queryRaw<Claimed[]>(prepared(Prisma.sql`
      WITH due AS (
        SELECT d."id", d."companyId" FROM "WebhookDelivery" d
        WHERE ${claimable} AND d."nextAttemptAt" <= ${this.deps.clock.companyNowSql('d."companyId"')}
          AND NOT (d."companyId"::text = ANY(${closed}::text[])) ${onlyOpen}
          AND NOT ${this.laneLeases.heldByOther(Prisma.sql`d."companyId"`, at.now)}
        ORDER BY d."seq"
        LIMIT ${this.options.batchSize}
      ),
      leased AS (${this.laneLeases.acquireSql(Prisma.sql`SELECT DISTINCT "companyId" AS "key" FROM due`, at)}) ${freeClosed}
      UPDATE "WebhookDelivery" d SET "claimedUntil" = ${leaseUntil}
      FROM due, leased, "Event" e, "Company" c
      WHERE d."id" = due."id" AND leased."key" = due."companyId"::text AND ${claimable}
        AND e."id" = d."eventId" AND c."id" = d."companyId"
      RETURNING d."id"::text AS "id", d."eventId", e."createdAt" AS "eventCreatedAt", d."companyId"::text AS "companyId", d."seq", d."attempts",
        e."payload"::text AS "payload", c."secretKey", c."mode", c."webhookUrl", ${this.deps.clock.offsetMsSql('d."companyId"')} AS "offsetMs",
        leased."generation"`));
    for (const key of freeing) this.closedLanes.delete(key);
    if (claimed.length === 0) return 0;

    const byLane = new Map<string, Prepared[]>();
    const orphaned: Claimed[] = [];
    const unplaced: Held[] = [];
    for (const c of claimed) {
      if (!c.webhookUrl) {
        orphaned.push(c);
        continue;
      }
      const batch = byLane.get(c.companyId) ?? [];
      batch.push({
        id: c.id,
        companyId: c.companyId,
        generation: c.generation,
        leaseUntil: leaseUntil.getTime(),
        eventId: c.eventId,
        eventCreatedAt: c.eventCreatedAt,
        url: c.webhookUrl,
        seq: c.seq,
        attempts: c.attempts,
        offsetMs: c.offsetMs,
        // The stored json text is the body, byte for byte (key order included).
        body: c.payload,
        secretKey: c.secretKey,
        mode: c.mode,
      });
      byLane.set(c.companyId, batch);
    }
    if (orphaned.length) {
      // The merchant removed the webhook URL: nothing to send to; redelivery works once a URL is set again.
      await this.deps.db.$executeRaw`
        UPDATE "WebhookDelivery" d SET "status" = 'failed', "claimedUntil" = NULL, "lastError" = 'no webhook URL is set', "updatedAt" = ${now}
        FROM ${this.underLane(orphaned)}`;
      for (const c of orphaned) this.deps.metrics?.recorded('no_url', c.mode, null, null);
    }
    const touched: Lane[] = [];
    for (const [key, deliveries] of byLane) {
      let lane = this.lanes.get(key);
      // A lane that failed or is closing meanwhile takes nothing more, and one claim can bring more new endpoints
      // than there are free lanes: those deliveries go back at once.
      if (lane ? lane.halted || lane.closing || !this.running : this.atCapacity() || !this.running) {
        unplaced.push(...deliveries);
        continue;
      }
      lane ??= this.openLane(key, deliveries[0]!.generation);
      if (lane.generation !== deliveries[0]!.generation) {
        // The lane was lost and taken back meanwhile (its lease ran out, another worker held it): what waits in
        // its queue and this claim did not take again may have been sent by the other; only the claim counts now.
        const taken = new Set(deliveries.map((d) => d.id));
        for (const d of lane.queue.filter((q) => !taken.has(q.id))) lane.held.delete(d.id);
        lane.queue = lane.queue.filter((q) => taken.has(q.id));
        lane.generation = deliveries[0]!.generation;
      }
      const queued = new Map(lane.queue.map((d) => [d.id, d]));
      for (const d of deliveries) {
        // Already ours: a renewed lease if it waits in the queue; nothing to do if it is in flight.
        const again = queued.get(d.id);
        if (again) {
          again.leaseUntil = d.leaseUntil;
          again.generation = d.generation;
        }
        if (lane.held.has(d.id)) continue;
        lane.held.add(d.id);
        lane.queue.push(d);
        lane.taken++;
      }
      // Keep the queue in seq order: a retry that came due, or an event committed late, goes before later ones.
      lane.queue.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
      touched.push(lane);
    }
    // Lanes leased for nothing (all sent back, or no URL) are free again at once. A closing lane's row is freed
    // only once the lane has handed its deliveries back (then by the next claim), so no other worker takes later
    // events of its endpoint past them.
    const unserved = [...new Set(claimed.map((c) => c.companyId))].filter((key) => !this.lanes.has(key));
    await this.release(unplaced, unserved);
    for (const lane of touched) this.pump(lane);
    return claimed.length;
  }

  private openLane(key: string, generation: number): Lane {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const lane: Lane = { key, generation, queue: [], window: [], held: new Set(), taken: 0, halted: false, closing: false, ended, end };
    this.lanes.set(key, lane);
    // The claim that opens it renewed its row.
    this.closedLanes.delete(key);
    return lane;
  }

  /** Starts what the lane may start now; closes it when nothing is left or may start. */
  private pump(lane: Lane): void {
    const lowWater = this.lowWater;
    const before = lane.queue.length;
    while (this.running && !lane.halted && lane.window.length < this.pipeline && lane.queue.length > 0) {
      // Start only while the claim outlasts the attempt and its recording, or another worker could take it meanwhile.
      // A lane whose claims run short hands them all back (in order) for a fresh claim.
      if (lane.queue[0]!.leaseUntil - Date.now() < this.deps.sender.timeoutMs + this.recordMarginMs) {
        lane.halted = true;
        break;
      }
      const d = lane.queue.shift()!;
      const slot = { done: false };
      lane.window.push(slot);
      void this.attempt(lane, d).finally(() => {
        slot.done = true;
        while (lane.window[0]?.done) lane.window.shift();
        lane.held.delete(d.id);
        this.pump(lane);
      });
    }
    if (lane.window.length > 0) {
      // Running low: ask for more while the lane still has work, so it does not drain before the next claim.
      if (before >= lowWater && lane.queue.length < lowWater && this.refillable(lane)) this.wake();
      return;
    }
    if (lane.closing || (lane.queue.length > 0 && this.running && !lane.halted)) return;
    lane.closing = true;
    const rest = lane.queue.splice(0);
    // A lane handing deliveries back keeps its place until they are back, so no claim meanwhile takes later
    // events of its endpoint past them; its row is ours until the next claim frees it.
    void this.release(rest, []).finally(() => {
      this.lanes.delete(lane.key);
      this.closedLanes.add(lane.key);
      lane.end();
      this.wake();
    });
  }

  private async attempt(lane: Lane, d: Prepared): Promise<void> {
    const send = () =>
      this.deps.sender.send({
        url: d.url,
        eventId: d.eventId,
        body: d.body,
        secretKey: d.secretKey,
        mode: d.mode,
        timestampSeconds: Math.floor(Date.now() / 1000),
      });
    const result = await send();
    // The soak's planted bug (docs/soak.md): every delivery sent twice, beyond the duplicate bound.
    if (result.ok && isPlanted('double-deliver')) await send();
    // Start nothing more on this endpoint: it is failing (what is already in flight ends and is recorded as it went).
    if (!result.ok) lane.halted = true;
    try {
      const real = this.deps.clock.real();
      const record = attemptRecord(d, result, real);
      if (!(await this.recorder.record(record))) {
        // Fenced out: the lane changed hands meanwhile; the delivery is the new holder's (it goes out again).
        lane.halted = true;
        this.deps.logger.warn({ deliveryId: d.id, companyId: d.companyId }, 'webhook lane taken over by another worker; its attempt is not recorded here');
        return;
      }
      // Counted once recorded: an attempt whose record is lost is made again, and counted then.
      this.deps.metrics?.recorded(
        record.status === 'delivered' ? 'delivered' : record.status === 'pending' ? 'retrying' : 'given_up',
        d.mode,
        result.durationMs / 1000,
        result.ok ? (real.getTime() - d.eventCreatedAt.getTime()) / 1000 : null,
      );
    } catch (e) {
      lane.halted = true;
      this.deps.logger.error({ err: e, deliveryId: d.id }, 'could not record a webhook attempt; the lease expiry retries it');
    }
  }

  /**
   * Hands claimed deliveries back at once, keeping their place in the order, and the lanes with them (one statement:
   * every sub-statement sees the lanes as they were, so the deliveries' fence holds while their lanes are freed). A
   * delivery whose lane changed hands is left alone: it is the new holder's.
   */
  private async release(deliveries: Held[], lanes: string[]): Promise<void> {
    if (deliveries.length === 0 && lanes.length === 0) return;
    const freeLanes = lanes.length ? Prisma.sql`WITH freed AS (${this.laneLeases.releaseKeysSql(lanes)})` : Prisma.empty;
    await this.deps.db.$executeRaw`
      ${freeLanes}
      UPDATE "WebhookDelivery" d SET "claimedUntil" = NULL FROM ${this.underLane(deliveries)} AND d."status" = 'pending'`.catch((e: unknown) =>
      this.deps.logger.warn({ err: e }, 'could not release webhook claims; they expire with the lease'),
    );
  }

  /**
   * The FROM and WHERE of a write to claimed deliveries (alias d): only those whose lane this worker still holds at
   * the generation they were claimed under.
   */
  private underLane(deliveries: Held[]): Prisma.Sql {
    return Prisma.sql`unnest(${deliveries.map((d) => d.id)}::uuid[], ${deliveries.map((d) => d.generation)}::int[]) AS h("id", "generation"),
        "WebhookLane" l
      WHERE d."id" = h."id" AND ${this.laneLeases.fenceOn(Prisma.sql`d."companyId"`, Prisma.sql`h."generation"`)}`;
  }
}

/** One attempt's row and its delivery's new state. */
export interface AttemptRecord {
  id: string;
  deliveryId: string;
  /** The delivery's lane and the generation of its lease the attempt was made under (the record's fence). */
  companyId: string;
  generation: number;
  attempt: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  status: 'delivered' | 'pending' | 'failed';
  url: string;
  nextAttemptAt: string;
  deliveredAt: string | null;
  updatedAt: string;
}

function attemptRecord(d: Prepared, result: SendResult, real: Date): AttemptRecord {
  const attempt = d.attempts + 1;
  // What the merchant sees (attempt times, the schedule) is on the company's clock; bookkeeping is real time.
  const now = new Date(real.getTime() + Number(d.offsetMs));
  const retryAt = result.ok ? null : nextAttemptAt(attempt, now);
  return {
    id: randomUUID(),
    deliveryId: d.id,
    companyId: d.companyId,
    generation: d.generation,
    attempt,
    startedAt: new Date(now.getTime() - result.durationMs).toISOString(),
    durationMs: result.durationMs,
    statusCode: result.statusCode,
    error: noNul(result.error),
    responseBody: noNul(result.responseBody),
    status: result.ok ? 'delivered' : retryAt ? 'pending' : 'failed',
    url: d.url,
    nextAttemptAt: (retryAt ?? now).toISOString(),
    deliveredAt: result.ok ? now.toISOString() : null,
    updatedAt: real.toISOString(),
  };
}

/** PostgreSQL text cannot hold NUL (a receiver may answer with one): it would fail the whole batch. */
const noNul = (s: string | null) => (s === null ? null : s.replaceAll('\u0000', '\uFFFD'));

/**
 * Records attempts of all lanes together: whatever ended while the previous statement ran goes in the next one
 * (group commit: no added wait when idle, bigger batches under load). Each record() resolves once its row is
 * committed; only then does its lane count the attempt as done, which bounds what a crash can leave unrecorded.
 * Records are fenced by their lane's lease: one made under a generation the lane no longer has is not written (it
 * resolves false), so a worker that lost a lane cannot overwrite the state its new holder gives the delivery.
 */
export class AttemptRecorder {
  private queue: { row: AttemptRecord; resolve: (written: boolean) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  /** Statements written and rows in them (tests, diagnostics). */
  readonly stats = { statements: 0, rows: 0 };

  constructor(
    private readonly db: Db,
    private readonly asyncCommit: boolean,
    private readonly lanes: Leases,
  ) {}

  /** Resolves true once written, false when fenced out (the lane changed hands). */
  record(row: AttemptRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the attempts ending in this same turn of the event loop join the first statement.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_RECORD_ROWS);
      try {
        const written = await this.write(batch.map((b) => b.row));
        for (const b of batch) b.resolve(written.has(b.row.deliveryId));
      } catch (e) {
        for (const b of batch) b.reject(e);
      }
    }
    this.flushing = false;
  }

  /** Writes the records whose lane's generation still holds; answers the deliveries written. */
  private async write(rows: AttemptRecord[]): Promise<Set<string>> {
    this.stats.statements++;
    this.stats.rows += rows.length;
    // One statement: the attempts and their deliveries' new states land together, for the deliveries whose lane
    // still has the generation they were claimed under. Asynchronous commit (SET LOCAL for this statement's own
    // transaction, no extra round trip): a database crash can lose the last few hundred ms of records; those
    // deliveries are still claimed and go out again after the lease, a duplicate, never a loss.
    const written = await this.db.$queryRaw<{ id: string }[]>`
      WITH ${this.asyncCommit ? Prisma.sql`async_commit AS (SELECT set_config('synchronous_commit', 'off', true)),` : Prisma.empty}
      input AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(
          "id" uuid, "deliveryId" uuid, "companyId" uuid, "generation" int, "attempt" int, "startedAt" timestamptz,
          "durationMs" int, "statusCode" int, "error" text, "responseBody" text, "status" text, "url" text,
          "nextAttemptAt" timestamptz, "deliveredAt" timestamptz, "updatedAt" timestamptz)
      ),
      updated AS (
        UPDATE "WebhookDelivery" d SET
          "attempts" = i."attempt", "status" = i."status", "claimedUntil" = NULL, "url" = i."url",
          "nextAttemptAt" = i."nextAttemptAt", "lastStatusCode" = i."statusCode", "lastError" = i."error",
          "deliveredAt" = i."deliveredAt", "updatedAt" = i."updatedAt"
        FROM input i, "WebhookLane" l ${this.asyncCommit ? Prisma.sql`, async_commit` : Prisma.empty}
        WHERE d."id" = i."deliveryId" AND d."companyId" = i."companyId"
          AND ${this.lanes.fenceOn(Prisma.sql`i."companyId"`, Prisma.sql`i."generation"`)}
        RETURNING d."id"
      ),
      a AS (
        INSERT INTO "WebhookAttempt" ("id", "deliveryId", "attempt", "startedAt", "durationMs", "statusCode", "error", "responseBody")
        SELECT i."id", i."deliveryId", i."attempt", i."startedAt", i."durationMs", i."statusCode", i."error", i."responseBody"
        FROM input i JOIN updated u ON u."id" = i."deliveryId"
      )
      SELECT "id"::text AS "id" FROM updated`;
    return new Set(written.map((w) => w.id));
  }
}
