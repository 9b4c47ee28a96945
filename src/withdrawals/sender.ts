// Sending withdrawals: the worker's batches hand them to their chain adapter, the intent recorded before any
// broadcast, so a crash at any point leads to the same call again, never to a second transaction.
import { Prisma, type Withdrawal } from '../../generated/prisma/client.ts';
import { commitWithEvents, eventsCtes } from '../core/events.ts';
import { RowClaims, type Claim } from '../core/lease.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { toMoney } from '../domain/money.ts';
import { withdrawalEvent, type WithdrawalDeps } from './model.ts';
import { finishLocked, lockWithdrawal } from './outcomes.ts';

/**
 * The sender's claims (core/lease.ts): a claim sets `claimedUntil` and bumps `sendAttempts`, which fences every
 * write made under it, so a process whose claim was taken over after the lease changes nothing.
 */
const SEND_CLAIMS = { table: 'Withdrawal', key: 'uid', keyType: 'uuid', until: 'claimedUntil', generation: 'sendAttempts' } as const;

/**
 * Takes up to `limit` withdrawals that wait for the chain (queued, or a send interrupted longer than the lease ago)
 * and moves them on. Taking them records the intent to send (stage `sending`) before anything is broadcast; the
 * risk hook may still reject one; the others are handed to their adapter with the withdrawal's uid as the
 * transfer id, so a crash at any point leads to the same call again, never to a second transaction. What the
 * chain took is recorded, with its second `processing` webhook, in one statement. Answers how many it moved on.
 */
export async function sendWithdrawalBatch(deps: WithdrawalDeps, limit = 50): Promise<number> {
  const claims = new RowClaims(SEND_CLAIMS, deps.sendLeaseMs);
  // Queued rows carry no claim; `sending` ones are claimable once their claim expired (a crashed send).
  const taken = await claims.claim<Withdrawal & { mode: Mode }>(deps.db, {
    where: Prisma.sql`t."stage" IN ('queued', 'sending')`,
    orderBy: Prisma.sql`t."createdAt", t."position"`,
    limit,
    set: Prisma.sql`"stage" = 'sending', "updatedAt" = now()`,
    returning: Prisma.sql`t.*, (SELECT c."mode" FROM "Company" c WHERE c."id" = t."companyId") AS "mode"`,
  });
  if (taken.length === 0) return 0;
  const sent: { w: Withdrawal; txHash: string }[] = [];
  const failed: Claim<unknown>[] = [];
  let moved = 0;
  for (const claim of taken) {
    const w = claim.row;
    // Only before the first send: a withdrawal claimed again (a failed send, a crash, a takeover) may already be
    // on chain, so it is never rejected; it is sent again with the same id, which answers that transaction.
    if (w.sendAttempts === 1) {
      const verdict = await deps.risk.review({ kind: 'withdrawal', companyId: w.companyId, asset: w.asset, address: w.toAddress });
      if (!verdict.allow) {
        if (await rejectSending(deps, w, verdict.reason)) moved++;
        continue;
      }
    }
    try {
      const { txHash } = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[w.asset as PaymentCurrency].network, w.mode).send({
        id: w.uid,
        purpose: 'withdrawal',
        asset: w.asset as PaymentCurrency,
        to: w.toAddress,
        tag: w.tag,
        amount: toMoney(w.amount),
      });
      sent.push({ w, txHash });
    } catch (e) {
      deps.logger?.warn({ err: e, uid: w.uid }, 'withdrawal send failed; it is retried');
      failed.push(claim);
    }
  }
  // Back to queued: the next run retries them (the same id: the adapter dedupes). Only while this claim is the
  // latest (the fence): a process that took one over after the lease owns it now.
  await claims.release(deps.db, failed, Prisma.sql`"stage" = 'queued', "updatedAt" = now()`);
  if (sent.length) {
    // Only rows still `sending` under this claim (the fence: not taken over by another process after the lease)
    // move, with their event; the claim ends with it.
    const recorded = await deps.db.$queryRaw<{ uid: string }[]>`
      WITH sent ("uid", "txHash", "sendAttempts") AS (
        SELECT * FROM unnest(${sent.map((s) => s.w.uid)}::uuid[], ${sent.map((s) => s.txHash)}::text[], ${sent.map((s) => s.w.sendAttempts)}::int[])
      ),
      moved AS (
        UPDATE "Withdrawal" t SET "stage" = 'sent', "txHash" = s."txHash", "sentAt" = now(), "updatedAt" = now(), "claimedUntil" = NULL
        FROM sent s WHERE t."uid" = s."uid" AND t."sendAttempts" = s."sendAttempts" AND t."stage" = 'sending'
        RETURNING t."uid"
      ),
      ${eventsCtes(
        sent.map((s) => withdrawalEvent(s.w, 'processing', s.txHash)),
        Prisma.sql`ev."subjectId" IN (SELECT "uid"::text FROM moved)`,
      )}
      SELECT "uid"::text AS "uid" FROM moved`;
    deps.events.committed();
    moved += recorded.length;
  }
  return moved;
}

/** The risk hook's refusal of a withdrawal before its first send: rejected, its hold released. */
async function rejectSending(deps: WithdrawalDeps, claimed: Withdrawal, reason: string): Promise<boolean> {
  return commitWithEvents(deps, async (tx) => {
    const w = await lockWithdrawal(tx, claimed.uid);
    // Still this claim's (the fence, read under the row lock: no takeover after the lease, which could have sent it).
    if (w?.stage !== 'sending' || w.sendAttempts !== claimed.sendAttempts) return false;
    await finishLocked(tx, w, { status: 'rejected', reason });
    return true;
  });
}

/** Sends every withdrawal waiting for the chain; answers how many it moved on. */
export async function sendQueuedWithdrawals(deps: WithdrawalDeps, limit = 10_000): Promise<number> {
  let moved = 0;
  for (;;) {
    const n = await sendWithdrawalBatch(deps);
    moved += n;
    // Nothing left, or only sends that failed (retried on the next interval).
    if (n === 0 || moved >= limit) return moved;
  }
}
