// Sends due e-mail deliveries. A delivery is claimed with a lease (claimedUntil), so several processes never send one
// at once, and a crashed sender's claims come back when the lease ends. Outcomes: accepted by the SMTP server ->
// sent (never sent again); no connection, timeout or 4xx -> retried with backoff (core/retry.ts); 5xx -> failed.
// A crash between the server's acceptance and the record sends that e-mail once more after the lease (docs/emails.md).
import { parseJsonExact } from '../core/json.ts';
import { retryAt } from '../core/retry.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { renderDelivery } from './content.ts';
import type { Mailer } from './smtp.ts';

const BATCH = 20;
/** A refund e-mail waits this long for the refund's transaction hash before it goes without one. */
const REFUND_HASH_WAIT_MS = 60_000;

export interface SenderOptions {
  leaseMs: number;
  retryDelaysMs: number[];
  payUrl: string;
}

interface Claimed {
  id: string;
  kind: string;
  lang: string;
  recipient: string;
  companyId: string;
  invoiceId: string | null;
  attempts: number;
  createdAt: Date;
  payload: unknown;
  seq: bigint;
}

/** Delays before each retry: `min`, then 4 times longer each, at most `max`; `attempts - 1` of them. */
export const retryDelays = (min: number, max: number, attempts: number): number[] =>
  Array.from({ length: Math.max(0, attempts - 1) }, (_, i) => Math.min(max, min * 4 ** i));

export class EmailSender {
  constructor(
    private readonly deps: { db: Db; logger: Logger; mailer: Mailer },
    private readonly options: SenderOptions,
  ) {}

  private halted = false;

  /** Starts no more attempts (shutdown): the run in progress ends after the one in flight; its other claims lapse. */
  halt(): void {
    this.halted = true;
  }

  /** Sends what is due now, batch after batch; answers how many attempts it made. */
  async run(): Promise<number> {
    let attempts = 0;
    while (!this.halted) {
      const claimed = await this.claim();
      for (const d of claimed) {
        if (this.halted) {
          await this.deps.db.$executeRaw`UPDATE "EmailDelivery" SET "claimedUntil" = NULL WHERE "id" = ${d.id}::uuid AND "status" = 'pending'`;
          continue;
        }
        attempts += await this.deliver(d);
      }
      if (claimed.length < BATCH) break;
    }
    return attempts;
  }

  private async claim(): Promise<Claimed[]> {
    const leaseUntil = new Date(Date.now() + this.options.leaseMs);
    // Sent in event order (an UPDATE ... RETURNING keeps no order of its own): a client reads "pending" before "done".
    const rows = await this.deps.db.$queryRaw<Claimed[]>`
      WITH due AS (
        SELECT d."id" FROM "EmailDelivery" d JOIN "Event" x ON x."id" = d."eventId"
        WHERE d."status" = 'pending' AND d."nextAttemptAt" <= now() AND (d."claimedUntil" IS NULL OR d."claimedUntil" < now())
        ORDER BY d."nextAttemptAt", x."seq", d."kind" LIMIT ${BATCH} FOR UPDATE OF d SKIP LOCKED
      )
      UPDATE "EmailDelivery" d SET "claimedUntil" = ${leaseUntil} FROM due, "Event" e
      WHERE d."id" = due."id" AND e."id" = d."eventId"
      RETURNING e."seq", d."id"::text AS "id", d."kind", d."lang", d."recipient", d."companyId"::text AS "companyId", d."invoiceId", d."attempts",
        d."createdAt", e."payload"::text AS "payload"`;
    // The payload's numbers keep their exact digits (a withdrawal amount is a JSON number; a float would round it).
    for (const row of rows) row.payload = parseJsonExact(row.payload as string);
    return rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : a.kind.localeCompare(b.kind)));
  }

  /** One attempt (0 when it was put off without one). */
  private async deliver(d: Claimed): Promise<number> {
    const { db, mailer, logger } = this.deps;
    let rendered;
    try {
      rendered = await renderDelivery(db, this.options.payUrl, d);
    } catch (e) {
      logger.error({ err: e, emailId: d.id }, 'could not render an e-mail; it is retried');
      await this.record(d, { ok: false, permanent: false, responseCode: null, error: 'could not render the e-mail' });
      return 1;
    }
    if (!rendered) {
      await this.record(d, { ok: false, permanent: true, responseCode: null, error: 'what the e-mail is about no longer exists' });
      return 1;
    }
    const refund = rendered.view?.refund;
    if (d.kind === 'client.refunded' && refund && !refund.txHash && Date.now() - d.createdAt.getTime() < REFUND_HASH_WAIT_MS) {
      // The refund is being sent: the e-mail waits a little for its transaction hash.
      await db.$executeRaw`UPDATE "EmailDelivery" SET "claimedUntil" = NULL, "nextAttemptAt" = now() + interval '2 seconds' WHERE "id" = ${d.id}::uuid`;
      return 0;
    }
    const outcome = await mailer.send({ to: d.recipient, ...rendered.email, headers: { 'X-Payrail-Email-Id': d.id } });
    await this.record(d, outcome);
    if (!outcome.ok) logger.warn({ emailId: d.id, kind: d.kind, responseCode: outcome.responseCode, error: outcome.error }, 'e-mail not accepted by the SMTP server');
    return 1;
  }

  private async record(
    d: Claimed,
    outcome: { ok: true; messageId: string; responseCode: number | null } | { ok: false; permanent: boolean; responseCode: number | null; error: string },
  ): Promise<void> {
    const attempt = d.attempts + 1;
    const now = new Date();
    const retry = outcome.ok || outcome.permanent ? null : retryAt(this.options.retryDelaysMs, attempt, now);
    const status = outcome.ok ? 'sent' : retry ? 'pending' : 'failed';
    await this.deps.db.$executeRaw`
      UPDATE "EmailDelivery" SET "attempts" = ${attempt}, "status" = ${status}, "claimedUntil" = NULL,
        "nextAttemptAt" = ${retry ?? now}, "lastResponseCode" = ${outcome.responseCode},
        "lastError" = ${outcome.ok ? null : outcome.error.replaceAll('\u0000', '')}, "messageId" = ${outcome.ok ? outcome.messageId : null},
        "sentAt" = ${outcome.ok ? now : null}, "updatedAt" = ${now}
      WHERE "id" = ${d.id}::uuid AND "status" = 'pending'`;
  }
}
