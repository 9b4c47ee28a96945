// Withdrawals: accepting them (rules, balance, hold), their lifecycle after the chain adapter took them, and reads.
// Every state change writes its ledger journal and its webhook event in the same transaction.
import { recordAudit } from '../core/audit.ts';
import type { Actor } from '../core/scopes.ts';
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { Prisma, type Withdrawal } from '../../generated/prisma/client.ts';
import type { ChainRegistry, OutgoingReport } from '../chains/adapter.ts';
import type { Company } from '../core/auth.ts';
import { commitWithEvents, eventsCtes, recordEvent, type EventDeps, type NewEvent } from '../core/events.ts';
import { idempotent } from '../core/idempotency.ts';
import { jsonNumber } from '../core/json.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import type { RiskHook } from '../core/risk.ts';
import { modeOfCompany } from '../core/tenants.ts';
import type { EventType } from '../domain/event-types.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { formatPlain, Money, toMoney } from '../domain/money.ts';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';
import type { Clock } from '../clock.ts';
import { payoutGuard } from './protection.ts';
import { ACCOUNTS, postDebitIfCovered, postJournal } from '../ledger/ledger.ts';
import { itemProblem, quoteWithdrawal, totalOf, type WithdrawalQuote, type WithdrawItem } from './rules.ts';

type Tx = Prisma.TransactionClient;

export interface WithdrawalDeps extends EventDeps {
  chains: ChainRegistry;
  /** The tenant's clock: the payout policy's cool-down runs on it (the test clock in test mode). */
  clock: Clock;
  risk: RiskHook;
  logger?: Logger;
  idempotencyTtlMs: number;
  sendLeaseMs: number;
}

export type WithdrawalStatus = 'processing' | 'done' | 'rejected';
export const WITHDRAWAL_STATUSES = ['processing', 'done', 'rejected'] as const satisfies readonly WithdrawalStatus[];

/** One element of the withdraw answer, in request order. `uid` is "" for a refused item (nothing was created). */
export interface ItemResult {
  message: string;
  success: boolean;
  uid: string;
}

export const ACCEPTED_MESSAGE = 'Withdrawal accepted and processing';

/** Whether the receiver address is valid for the asset's network format (rule 4; rule 5 follows from it). */
export const addressCheck =
  (chains: ChainRegistry, mode: Mode) =>
  (asset: PaymentCurrency, address: string): boolean =>
    chains.forNetwork(PAYMENT_CURRENCY_INFO[asset].network, mode).isValidAddress(address);

/** Why withdrawals in `asset` cannot be sent at all where its network runs in `mode` (off, no signer, not supported), or null. */
export const sendCheck =
  (chains: ChainRegistry, mode: Mode) =>
  (asset: PaymentCurrency): string | null => {
    const why = chains.forNetwork(PAYMENT_CURRENCY_INFO[asset].network, mode).sendRefusal(asset);
    return why ? `Withdrawals in ${asset} are not possible: ${why}` : null;
  };

/** A withdrawal to create: checked against every rule except the balance. */
export interface Candidate {
  position: number;
  item: WithdrawItem;
  quote: WithdrawalQuote;
}

/** The webhook body exactly as the spec's table (rejected has no txHash key at all). */
export function withdrawalEvent(w: Pick<Withdrawal, 'uid' | 'companyId' | 'asset' | 'amount' | 'fee' | 'toAddress'>, status: WithdrawalStatus, txHash = ''): NewEvent {
  const asset = w.asset as PaymentCurrency;
  return {
    type: `withdrawal.${status}` satisfies EventType,
    companyId: w.companyId,
    subject: { type: 'withdrawal', id: w.uid },
    payload: {
      type: 'withdrawal',
      status,
      asset: PAYMENT_CURRENCY_INFO[asset].asset,
      dchain: asset,
      amount: jsonNumber(formatPlain(toMoney(w.amount))),
      fee: formatPlain(toMoney(w.fee)),
      to: w.toAddress,
      ...(status === 'rejected' ? {} : { txHash }),
      uid: w.uid,
    },
  };
}

/**
 * Creates the withdrawals of one asset, all or none: the balance check, the hold of amount plus fee of every item,
 * the rows and their first webhooks are one statement (postDebitIfCovered), so without a transaction around it the
 * balance's debit lock is held only while it runs.
 */
async function holdAssetGroup(q: Tx, companyId: string, asset: PaymentCurrency, group: Candidate[], origin: 'api' | 'auto'): Promise<{ uids: string[] } | { refused: string }> {
  const total = totalOf(group.map((c) => c.quote));
  const rows = group.map((c) => ({
    uid: randomUUID(),
    companyId,
    asset,
    amount: c.item.amount,
    fee: c.quote.fee,
    toAddress: c.item.to,
    tag: c.item.tag,
    position: c.position,
  }));
  const values = rows.map(
    (r) => Prisma.sql`(${r.uid}::uuid, ${companyId}::uuid, ${asset}::text, ${r.amount.toFixed()}::numeric, ${r.fee.toFixed()}::numeric, ${r.toAddress}::text,
      ${r.tag}::text, 'processing', 'queued', ${origin}::text, ${r.position}::int)`,
  );
  const { covered, available } = await postDebitIfCovered(
    q,
    {
      companyId,
      asset,
      kind: 'withdrawal_hold',
      postings: [
        { account: ACCOUNTS.merchantAvailable, amount: total.neg() },
        ...group.map((c, i) => ({ account: ACCOUNTS.merchantHeld, amount: c.quote.total, withdrawalId: rows[i]!.uid })),
      ],
    },
    (when) => Prisma.sql`new_withdrawals AS (
        INSERT INTO "Withdrawal" ("uid", "companyId", "asset", "amount", "fee", "toAddress", "tag", "status", "stage", "origin", "position")
        SELECT * FROM (VALUES ${Prisma.join(values)}) AS w WHERE ${when}
      ),
      ${eventsCtes(rows.map((r) => withdrawalEvent(r, 'processing')), when)}`,
  );
  if (covered) return { uids: rows.map((r) => r.uid) };
  return {
    refused:
      group.length === 1
        ? `Insufficient balance: ${total.toFixed()} ${asset} needed (amount plus fee), ${available.toFixed()} available`
        : `Insufficient balance: the ${group.length} ${asset} items need ${total.toFixed()} (amounts plus fees), ${available.toFixed()} available`,
  };
}

/** The candidates by asset, in a fixed order (two bulk calls lock balances in the same order). */
const byAsset = (candidates: Candidate[]): [PaymentCurrency, Candidate[]][] => {
  const groups = new Map<PaymentCurrency, Candidate[]>();
  for (const c of candidates) groups.set(c.item.asset, [...(groups.get(c.item.asset) ?? []), c]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
};

/**
 * Creates the candidates' withdrawals (in the caller's transaction, or alone for one asset): per asset, all of its
 * items or none of them (docs/withdrawals.md). Answers, per candidate position, the uid or the refusal. Their
 * `withdrawal.processing` events are the caller's to note (noteEvents, or idempotent's `events`).
 */
export async function createWithdrawals(
  q: Tx,
  companyId: string,
  candidates: Candidate[],
  origin: 'api' | 'auto',
): Promise<Map<number, { uid: string } | { refused: string }>> {
  const outcome = new Map<number, { uid: string } | { refused: string }>();
  for (const [asset, group] of byAsset(candidates)) {
    const held = await holdAssetGroup(q, companyId, asset, group, origin);
    group.forEach((c, i) => outcome.set(c.position, 'uids' in held ? { uid: held.uids[i]! } : held));
  }
  return outcome;
}

export interface WithdrawResult {
  results: ItemResult[];
  /** True when an Idempotency-Key matched an earlier request and nothing new was created. */
  replayed: boolean;
}

/** POST /api/transactions/withdraw: one result per item, in request order. */
export async function withdraw(deps: WithdrawalDeps, company: Company, actor: Actor, input: { items: WithdrawItem[] }, idempotencyKey?: string | null): Promise<WithdrawResult> {
  const isValidAddress = addressCheck(deps.chains, company.mode);
  const sendProblem = sendCheck(deps.chains, company.mode);
  // Refused up front rather than held and retried forever; the payout policy refuses addresses outside the book.
  const guard = await payoutGuard(deps, company.id);
  const problems = input.items.map((item) => itemProblem(item, isValidAddress) ?? sendProblem(item.asset) ?? guard(item));
  const candidates: Candidate[] = input.items.flatMap((item, position) =>
    problems[position] ? [] : [{ position, item, quote: quoteWithdrawal(item.asset, item.amount) }],
  );
  const { result, replayed } = await idempotent(
    deps,
    { companyId: company.id, key: idempotencyKey, operation: 'withdraw', input, ttlMs: deps.idempotencyTtlMs },
    {
      // Not one statement: the audit entry is written in the same transaction as the withdrawals.
      execute: async (tx) => {
        const created = candidates.length ? await createWithdrawals(tx, company.id, candidates, 'api') : new Map();
        const results: ItemResult[] = input.items.map((_item, position) => {
          const problem = problems[position];
          if (problem) return { message: problem, success: false, uid: '' };
          const o = created.get(position)!;
          return 'uid' in o ? { message: ACCEPTED_MESSAGE, success: true, uid: o.uid } : { message: o.refused, success: false, uid: '' };
        });
        const accepted = [...created.values()].filter((o) => 'uid' in o);
        await recordAudit(tx, company.id, actor, 'withdrawal.requested', {
          items: input.items.map((item, i) => ({
            asset: item.asset,
            amount: item.amount.toFixed(),
            to: item.to,
            tag: item.tag,
            uid: results[i]!.uid || null,
            refused: results[i]!.success ? null : results[i]!.message,
          })),
        });
        return {
          result: results,
          stored: { results: results as unknown as Prisma.InputJsonArray },
          events: accepted.map(() => 'withdrawal.processing'),
        };
      },
      replay: async (stored) => (stored as unknown as { results: ItemResult[] }).results,
    },
  );
  return { results: result, replayed };
}

/** The withdrawal of this merchant, or 404. */
export async function getWithdrawal(deps: Pick<WithdrawalDeps, 'db'>, company: Company, uid: string): Promise<Withdrawal> {
  const w = z.uuid().safeParse(uid).success ? await deps.db.withdrawal.findUnique({ where: { uid } }) : null;
  if (!w || w.companyId !== company.id) throw new NotFoundError(`No withdrawal with uid ${uid}`);
  return w;
}

const lockWithdrawal = async (tx: Tx, uid: string): Promise<Withdrawal | undefined> =>
  (await tx.$queryRaw<Withdrawal[]>`SELECT * FROM "Withdrawal" WHERE "uid" = ${uid}::uuid FOR UPDATE`)[0];

type Outcome = { status: 'done'; txHash: string } | { status: 'rejected'; reason: string };

/**
 * Finishes a withdrawal that is not final yet, in the caller's transaction: done turns the hold into the final
 * debit (amount out to the chain, fee to the network); rejected gives the hold back to available.
 */
async function finishLocked(tx: Tx, w: Withdrawal, outcome: Outcome): Promise<Withdrawal> {
  const total = toMoney(w.amount).plus(toMoney(w.fee));
  const done = outcome.status === 'done';
  await postJournal(tx, {
    companyId: w.companyId,
    asset: w.asset,
    kind: done ? 'withdrawal' : 'withdrawal_release',
    withdrawalId: w.uid,
    postings: [
      { account: ACCOUNTS.merchantHeld, amount: total.neg() },
      ...(done
        ? [
            { account: ACCOUNTS.chainExternal, amount: toMoney(w.amount) },
            { account: ACCOUNTS.networkFees, amount: toMoney(w.fee) },
          ]
        : [{ account: ACCOUNTS.merchantAvailable, amount: total }]),
    ],
  });
  const finished = await tx.withdrawal.update({
    where: { uid: w.uid },
    data: {
      status: outcome.status,
      stage: outcome.status,
      ...(outcome.status === 'done' ? { txHash: outcome.txHash } : { rejectReason: outcome.reason }),
      completedAt: new Date(),
      updatedAt: new Date(),
    },
  });
  await recordEvent(tx, withdrawalEvent(finished, outcome.status, outcome.status === 'done' ? outcome.txHash : undefined));
  return finished;
}

/**
 * What the chain of `mode` says of an outgoing transaction. Repeats change nothing; a report for an id that is no
 * withdrawal of that mode (a refund; another mode's) is ignored. A final withdrawal never changes again.
 */
export async function applyOutgoingReport(deps: WithdrawalDeps, report: OutgoingReport, mode: Mode): Promise<Withdrawal | null> {
  if (!z.uuid().safeParse(report.id).success) return null;
  return commitWithEvents(deps, async (tx) => {
    const w = await lockWithdrawal(tx, report.id);
    if (!w || (await modeOfCompany(tx, w.companyId)) !== mode) return null;
    if (w.stage === 'done' || w.stage === 'rejected') {
      const same = (w.stage === 'done') === (report.outcome === 'confirmed');
      if (same) return w;
      throw new ConflictError('CONFLICT', `Withdrawal ${w.uid} is already ${w.status}`);
    }
    // The send may have been replaced with higher fees since it was recorded: any of its hashes is this withdrawal's.
    if (w.stage !== 'sent' || (w.txHash !== report.txHash && !report.earlier?.includes(w.txHash ?? ''))) {
      throw new ConflictError('CONFLICT', `Withdrawal ${w.uid} has no transaction ${report.txHash} on chain yet`);
    }
    return finishLocked(tx, w, report.outcome === 'confirmed' ? { status: 'done', txHash: report.txHash } : { status: 'rejected', reason: 'Failed on the blockchain' });
  });
}

/**
 * Takes up to `limit` withdrawals that wait for the chain (queued, or a send interrupted longer than the lease ago)
 * and moves them on. Taking them records the intent to send (stage `sending`) before anything is broadcast; the
 * risk hook may still reject one; the others are handed to their adapter with the withdrawal's uid as the
 * transfer id, so a crash at any point leads to the same call again, never to a second transaction. What the
 * chain took is recorded, with its second `processing` webhook, in one statement. Answers how many it moved on.
 */
export async function sendWithdrawalBatch(deps: WithdrawalDeps, limit = 50): Promise<number> {
  // Each kind through the (stage, createdAt, position) index.
  const claimed = await deps.db.$queryRaw<(Withdrawal & { mode: Mode })[]>`
    WITH queued AS (
      SELECT "uid" FROM "Withdrawal" WHERE "stage" = 'queued' ORDER BY "createdAt", "position" LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), stale AS (
      SELECT "uid" FROM "Withdrawal" WHERE "stage" = 'sending' AND "updatedAt" < now() - ${deps.sendLeaseMs} * interval '1 millisecond'
      ORDER BY "createdAt", "position" LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE "Withdrawal" w SET "stage" = 'sending', "sendAttempts" = w."sendAttempts" + 1, "updatedAt" = now()
    WHERE w."uid" IN (SELECT "uid" FROM queued UNION ALL SELECT "uid" FROM stale)
    RETURNING w.*, (SELECT c."mode" FROM "Company" c WHERE c."id" = w."companyId") AS "mode"`;
  if (claimed.length === 0) return 0;
  claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.position - b.position);
  const sent: { w: Withdrawal; txHash: string }[] = [];
  const failed: Withdrawal[] = [];
  let moved = 0;
  for (const w of claimed) {
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
      failed.push(w);
    }
  }
  // Back to queued: the next run retries them (the same id: the adapter dedupes). Only while this claim is the
  // latest (sendAttempts unchanged): a process that took one over after the lease owns it now.
  for (const w of failed) {
    await deps.db.withdrawal.updateMany({ where: { uid: w.uid, stage: 'sending', sendAttempts: w.sendAttempts }, data: { stage: 'queued', updatedAt: new Date() } });
  }
  if (sent.length) {
    // Only rows still `sending` (not taken over by another process after the lease) move, with their event.
    const recorded = await deps.db.$queryRaw<{ uid: string }[]>`
      WITH sent ("uid", "txHash") AS (SELECT * FROM unnest(${sent.map((s) => s.w.uid)}::uuid[], ${sent.map((s) => s.txHash)}::text[])),
      moved AS (
        UPDATE "Withdrawal" w SET "stage" = 'sent', "txHash" = s."txHash", "sentAt" = now(), "updatedAt" = now()
        FROM sent s WHERE w."uid" = s."uid" AND w."stage" = 'sending'
        RETURNING w."uid"
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
    // Still this claim's (no takeover after the lease, which could have sent it meanwhile).
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

export const withdrawalListSchema = z.object({
  status: z.enum(WITHDRAWAL_STATUSES).optional(),
  asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }).optional(),
  after: z.uuid({ message: 'must be a withdrawal uid from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export interface WithdrawalFilter {
  /** Any of these statuses / assets. */
  status?: string[] | undefined;
  asset?: string[] | undefined;
}

/** The merchant's withdrawals matching a filter: the one definition REST and GraphQL lists share. */
export const withdrawalListWhere = (company: Company, filter: WithdrawalFilter = {}): Prisma.WithdrawalWhereInput => ({
  companyId: company.id,
  ...(filter.status?.length ? { status: { in: filter.status } } : {}),
  ...(filter.asset?.length ? { asset: { in: filter.asset } } : {}),
});

/** Newest first; within one call in request order. */
export const withdrawalListOrder = [{ createdAt: 'desc' }, { position: 'asc' }, { uid: 'desc' }] satisfies Prisma.WithdrawalOrderByWithRelationInput[];

/** Newest first; `after` is the last uid of the previous page. */
export async function listWithdrawals(deps: Pick<WithdrawalDeps, 'db'>, company: Company, q: z.output<typeof withdrawalListSchema>) {
  const rows = await deps.db.withdrawal.findMany({
    where: withdrawalListWhere(company, { status: q.status ? [q.status] : undefined, asset: q.asset ? [q.asset] : undefined }),
    orderBy: withdrawalListOrder,
    ...pageArgs('uid', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (w) => w.uid);
  return { withdrawals: page, nextCursor };
}
