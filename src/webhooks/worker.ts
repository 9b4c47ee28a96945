// Delivers webhooks from the outbox. Claims due deliveries with a lease (FOR UPDATE SKIP LOCKED, so several
// workers or processes never take the same row), sends each endpoint's deliveries one at a time in event
// order, and records every attempt the moment it ends. Each company's endpoint is a lane; lanes run in
// parallel, so a slow endpoint holds only its own lane, and after a failure a lane hands back the rest of its
// batch instead of waiting. Every attempt goes to the company's current URL, so fixing a URL heals retries.
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { nextAttemptAt } from './schedule.ts';
import type { WebhookSender } from './sender.ts';

const MIN_CLAIM_GAP_MS = 10;

export interface WorkerOptions {
  /** Endpoints served at once. */
  concurrency: number;
  /** Deliveries claimed per query. */
  batchSize: number;
  /** How long a claim holds before another worker may take the delivery (covers one timeout and more). */
  leaseMs: number;
  /** Fallback poll when nothing wakes the worker (other processes' events, retries coming due). */
  pollMs: number;
}

interface Claimed {
  id: string;
  eventId: string;
  companyId: string;
  url: string;
  seq: bigint;
  attempts: number;
  /** The company's test clock offset (sandbox): its retries are scheduled on its own time. */
  offsetMs: bigint;
}

interface Prepared extends Claimed {
  body: string;
  secretKey: string;
}

export class WebhookWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly lanes = new Map<string, Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private lastClaimAt = 0;
  /** A wake() that came while the loop was claiming, not sleeping: the next sleep is cut short. */
  private missedWake = false;

  constructor(
    private readonly deps: { db: Db; clock: Clock; logger: Logger; sender: WebhookSender },
    private readonly options: WorkerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * New deliveries may be due (an event committed, the test clock moved): look soon instead of at the next
   * poll. Wakes within MIN_CLAIM_GAP_MS of the last claim coalesce, so a burst of writes costs few claims.
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
    await Promise.allSettled([...this.lanes.values()]);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      if (this.lanes.size < this.options.concurrency) {
        claimed = await this.claimAndStart().catch((e: unknown) => {
          this.deps.logger.error({ err: e }, 'webhook claim failed');
          return 0;
        });
      }
      if (claimed === 0 || this.lanes.size >= this.options.concurrency) await this.sleep(this.options.pollMs);
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

  private async claimAndStart(): Promise<number> {
    this.lastClaimAt = Date.now();
    // Leases are real time; whether a retry is due is the company's time (its sandbox test clock).
    const now = this.deps.clock.real();
    const leaseUntil = new Date(now.getTime() + this.options.leaseMs);
    const busy = [...this.lanes.keys()];
    const claimed = await this.deps.db.$queryRaw<Claimed[]>`
      UPDATE "WebhookDelivery" d SET "claimedUntil" = ${leaseUntil}
      WHERE d."id" IN (
        SELECT w."id" FROM "WebhookDelivery" w
        WHERE w."status" = 'pending' AND w."nextAttemptAt" <= ${this.deps.clock.companyNowSql('w."companyId"')}
          AND (w."claimedUntil" IS NULL OR w."claimedUntil" < ${now})
          AND NOT (w."companyId"::text = ANY(${busy}::text[]))
        ORDER BY w."seq"
        LIMIT ${this.options.batchSize}
        FOR UPDATE SKIP LOCKED)
      RETURNING d."id"::text AS "id", d."eventId", d."companyId"::text AS "companyId", d."url", d."seq", d."attempts",
        ${this.deps.clock.sandbox ? Prisma.sql`COALESCE((SELECT sc."offsetMs" FROM "SandboxClock" sc WHERE sc."companyId" = d."companyId"), 0)` : Prisma.sql`0::bigint`} AS "offsetMs"`;
    if (claimed.length === 0) return 0;

    const [events, companies] = await Promise.all([
      this.deps.db.event.findMany({ where: { id: { in: [...new Set(claimed.map((c) => c.eventId))] } }, select: { id: true, type: true, payload: true } }),
      this.deps.db.company.findMany({
        where: { id: { in: [...new Set(claimed.map((c) => c.companyId))] } },
        select: { id: true, secretKey: true, webhookUrl: true },
      }),
    ]);
    const eventById = new Map(events.map((e) => [e.id, e]));
    const companyById = new Map(companies.map((c) => [c.id, c]));
    const byLane = new Map<string, Prepared[]>();
    const orphaned: string[] = [];
    for (const c of claimed) {
      const event = eventById.get(c.eventId);
      const company = companyById.get(c.companyId);
      if (!event || !company?.webhookUrl) {
        orphaned.push(c.id);
        continue;
      }
      const lane = byLane.get(c.companyId) ?? [];
      lane.push({ ...c, url: company.webhookUrl, body: JSON.stringify(event.payload), secretKey: company.secretKey });
      byLane.set(c.companyId, lane);
    }
    if (orphaned.length) {
      // The merchant removed the webhook URL: nothing to send to; redelivery works once a URL is set again.
      await this.deps.db.webhookDelivery.updateMany({
        where: { id: { in: orphaned } },
        data: { status: 'failed', claimedUntil: null, lastError: 'no webhook URL is set', updatedAt: now },
      });
    }
    for (const [key, deliveries] of byLane) {
      deliveries.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
      const lane = this.runLane(deliveries).finally(() => {
        this.lanes.delete(key);
        this.wake();
      });
      this.lanes.set(key, lane);
    }
    return claimed.length;
  }

  private async runLane(deliveries: Prepared[]): Promise<void> {
    for (let i = 0; i < deliveries.length; i++) {
      const d = deliveries[i]!;
      if (!this.running) return this.release(deliveries.slice(i));
      const result = await this.deps.sender.send({
        url: d.url,
        eventId: d.eventId,
        body: d.body,
        secretKey: d.secretKey,
        timestampSeconds: Math.floor(Date.now() / 1000),
      });
      const attempt = d.attempts + 1;
      const real = this.deps.clock.real();
      // What the merchant sees (attempt times, the schedule) is on the company's clock; bookkeeping is real time.
      const now = new Date(real.getTime() + Number(d.offsetMs));
      const retryAt = result.ok ? null : nextAttemptAt(attempt, now);
      const status = result.ok ? 'delivered' : retryAt ? 'pending' : 'failed';
      try {
        // One statement: the attempt and the delivery's new state land together.
        await this.deps.db.$executeRaw`
          WITH a AS (
            INSERT INTO "WebhookAttempt" ("id", "deliveryId", "attempt", "startedAt", "durationMs", "statusCode", "error", "responseBody")
            VALUES (${randomUUID()}::uuid, ${d.id}::uuid, ${attempt}, ${new Date(now.getTime() - result.durationMs)}, ${result.durationMs},
                    ${result.statusCode}, ${result.error}, ${result.responseBody})
          )
          UPDATE "WebhookDelivery" SET
            "attempts" = ${attempt}, "status" = ${status}, "claimedUntil" = NULL, "url" = ${d.url},
            "nextAttemptAt" = ${retryAt ?? now}, "lastStatusCode" = ${result.statusCode}, "lastError" = ${result.error},
            "deliveredAt" = ${result.ok ? now : null}, "updatedAt" = ${real}
          WHERE "id" = ${d.id}::uuid`;
      } catch (e) {
        this.deps.logger.error({ err: e, deliveryId: d.id }, 'could not record a webhook attempt; the lease expiry retries it');
        return;
      }
      if (!result.ok) return this.release(deliveries.slice(i + 1));
    }
  }

  /** Hands claimed deliveries back at once, keeping their place in the order. */
  private async release(rest: Prepared[]): Promise<void> {
    if (rest.length === 0) return;
    await this.deps.db.webhookDelivery
      .updateMany({ where: { id: { in: rest.map((d) => d.id) }, status: 'pending' }, data: { claimedUntil: null } })
      .catch((e: unknown) => this.deps.logger.warn({ err: e }, 'could not release webhook claims; they expire with the lease'));
  }
}
