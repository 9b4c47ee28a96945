// Sends due e-mail deliveries. A delivery is claimed with a lease (core/lease.ts: claimedUntil, claimGeneration), so
// several processes never send one at once, a crashed sender's claims come back when the lease ends, and a sender
// that lost its claim records nothing. Outcomes: accepted by the SMTP server ->
// sent (never sent again); no connection, timeout or 4xx -> retried with backoff (core/retry.ts); 5xx -> failed.
// A crash between the server's acceptance and the record sends that e-mail once more after the lease (docs/emails.md).
import { Prisma } from '../../generated/prisma/client.ts';
import { parseJsonExact } from '../core/json.ts';
import { RowClaims, type Claim } from '../core/lease.ts';
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

/** A claim sets `claimedUntil` and bumps `claimGeneration`, the fence of every write the sender makes under it. */
const SEND_CLAIMS = { table: 'EmailDelivery', key: 'id', keyType: 'uuid', until: 'claimedUntil', generation: 'claimGeneration' } as const;

interface Delivery {
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

type Claimed = Claim<Delivery>;

/** Delays before each retry: `min`, then 4 times longer each, at most `max`; `attempts - 1` of them. */
export const retryDelays = (min: number, max: number, attempts: number): number[] =>
  Array.from({ length: Math.max(0, attempts - 1) }, (_, i) => Math.min(max, min * 4 ** i));

export class EmailSender {
  constructor(
    private readonly deps: { db: Db; logger: Logger; mailer: Mailer },
    private readonly options: SenderOptions,
  ) {
    this.claims = new RowClaims(SEND_CLAIMS, options.leaseMs);
  }

  private readonly claims: RowClaims;
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
      for (const [i, d] of claimed.entries()) {
        if (this.halted) {
          await this.claims.release(this.deps.db, claimed.slice(i));
          break;
        }
        attempts += await this.deliver(d);
      }
      if (claimed.length < BATCH) break;
    }
    return attempts;
  }

  private async claim(): Promise<Claimed[]> {
    const event = (column: string) => Prisma.sql`(SELECT e.${Prisma.raw(`"${column}"`)} FROM "Event" e WHERE e."id" = t."eventId")`;
    // Sent in event order: a client reads "pending" before "done".
    const claimed = await this.claims.claim<Delivery>(this.deps.db, {
      where: Prisma.sql`t."status" = 'pending' AND t."nextAttemptAt" <= now()`,
      orderBy: Prisma.sql`t."nextAttemptAt", ${event('seq')}, t."kind"`,
      limit: BATCH,
      returning: Prisma.sql`${event('seq')} AS "seq", t."id"::text AS "id", t."kind", t."lang", t."recipient", t."companyId"::text AS "companyId",
        t."invoiceId", t."attempts", t."createdAt", ${event('payload')}::text AS "payload"`,
    });
    // The payload's numbers keep their exact digits (a withdrawal amount is a JSON number; a float would round it).
    for (const { row } of claimed) row.payload = parseJsonExact(row.payload as string);
    return claimed.sort((a, b) => (a.row.seq < b.row.seq ? -1 : a.row.seq > b.row.seq ? 1 : a.row.kind.localeCompare(b.row.kind)));
  }

  /** One attempt (0 when it was put off without one). */
  private async deliver(claim: Claimed): Promise<number> {
    const { db, mailer, logger } = this.deps;
    const d = claim.row;
    let rendered;
    try {
      rendered = await renderDelivery(db, this.options.payUrl, d);
    } catch (e) {
      logger.error({ err: e, emailId: d.id }, 'could not render an e-mail; it is retried');
      await this.record(claim, { ok: false, permanent: false, responseCode: null, error: 'could not render the e-mail' });
      return 1;
    }
    if (!rendered) {
      await this.record(claim, { ok: false, permanent: true, responseCode: null, error: 'what the e-mail is about no longer exists' });
      return 1;
    }
    const refund = rendered.view?.refund;
    if (d.kind === 'client.refunded' && refund && !refund.txHash && Date.now() - d.createdAt.getTime() < REFUND_HASH_WAIT_MS) {
      // The refund is being sent: the e-mail waits a little for its transaction hash.
      await this.claims.release(db, [claim], Prisma.sql`"nextAttemptAt" = now() + interval '2 seconds'`);
      return 0;
    }
    const outcome = await mailer.send({ to: d.recipient, ...rendered.email, headers: { 'X-Payrail-Email-Id': d.id } });
    await this.record(claim, outcome);
    if (!outcome.ok) logger.warn({ emailId: d.id, kind: d.kind, responseCode: outcome.responseCode, error: outcome.error }, 'e-mail not accepted by the SMTP server');
    return 1;
  }

  /** The attempt's outcome, and the claim handed back: only while it is current (a sender taken over records nothing). */
  private async record(
    claim: Claimed,
    outcome: { ok: true; messageId: string; responseCode: number | null } | { ok: false; permanent: boolean; responseCode: number | null; error: string },
  ): Promise<void> {
    const attempt = claim.row.attempts + 1;
    const now = new Date();
    const retry = outcome.ok || outcome.permanent ? null : retryAt(this.options.retryDelaysMs, attempt, now);
    const status = outcome.ok ? 'sent' : retry ? 'pending' : 'failed';
    const recorded = await this.claims.release(
      this.deps.db,
      [claim],
      Prisma.sql`"attempts" = ${attempt}, "status" = ${status}, "nextAttemptAt" = ${retry ?? now}, "lastResponseCode" = ${outcome.responseCode},
        "lastError" = ${outcome.ok ? null : outcome.error.replaceAll('\u0000', '')}, "messageId" = ${outcome.ok ? outcome.messageId : null},
        "sentAt" = ${outcome.ok ? now : null}, "updatedAt" = ${now}`,
      Prisma.sql`t."status" = 'pending'`,
    );
    if (recorded.length === 0) this.deps.logger.warn({ emailId: claim.key }, 'e-mail claim taken over before its outcome was recorded; the outcome is dropped');
  }
}
