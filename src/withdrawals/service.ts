// Withdrawals: accepting them (rules, balance, hold), their lifecycle after the chain adapter took them, and reads.
// Every state change writes its ledger journal and its webhook event in the same transaction.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { Prisma, type Withdrawal } from '../../generated/prisma/client.ts';
import type { ChainRegistry, OutgoingReport } from '../chains/adapter.ts';
import type { Company } from '../core/auth.ts';
import { commitWithEvents, recordEvent, recordEvents, type EventDeps, type NewEvent } from '../core/events.ts';
import { idempotent } from '../core/idempotency.ts';
import { jsonNumber } from '../core/json.ts';
import type { RiskHook } from '../core/risk.ts';
import type { EventType } from '../domain/event-types.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, Money, toMoney } from '../domain/money.ts';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';
import { ACCOUNTS, InsufficientFundsError, postJournal } from '../ledger/ledger.ts';
import { itemProblem, quoteWithdrawal, totalOf, type WithdrawalQuote, type WithdrawItem } from './rules.ts';

type Tx = Prisma.TransactionClient;

export interface WithdrawalDeps extends EventDeps {
  chains: ChainRegistry;
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
  (chains: ChainRegistry) =>
  (asset: PaymentCurrency, address: string): boolean =>
    chains.forNetwork(PAYMENT_CURRENCY_INFO[asset].network).isValidAddress(address);

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
 * Creates the candidates' withdrawals in the caller's transaction: per asset, the balance check and the hold of
 * amount plus fee of every item are one exact debit of merchant_available (locked until commit). An asset whose
 * items together exceed its available balance gets none of them (all-or-nothing per asset; docs/withdrawals.md).
 * Answers, per candidate position, the uid or the refusal.
 */
export async function createWithdrawals(
  tx: Tx,
  companyId: string,
  candidates: Candidate[],
  origin: 'api' | 'auto',
): Promise<Map<number, { uid: string } | { refused: string }>> {
  const outcome = new Map<number, { uid: string } | { refused: string }>();
  const byAsset = new Map<PaymentCurrency, Candidate[]>();
  for (const c of candidates) byAsset.set(c.item.asset, [...(byAsset.get(c.item.asset) ?? []), c]);
  const rows: Prisma.WithdrawalCreateManyInput[] = [];
  // Assets in a fixed order: two bulk calls lock balances in the same order.
  for (const [asset, group] of [...byAsset.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const total = totalOf(group.map((c) => c.quote));
    const uids = group.map(() => randomUUID());
    try {
      await postJournal(tx, {
        companyId,
        asset,
        kind: 'withdrawal_hold',
        postings: [
          { account: ACCOUNTS.merchantAvailable, amount: total.neg() },
          ...group.map((c, i) => ({ account: ACCOUNTS.merchantHeld, amount: c.quote.total, withdrawalId: uids[i]! })),
        ],
      });
    } catch (e) {
      if (!(e instanceof InsufficientFundsError)) throw e;
      const message =
        group.length === 1
          ? `Insufficient balance: ${total.toFixed()} ${asset} needed (amount plus fee), ${e.available.toFixed()} available`
          : `Insufficient balance: the ${group.length} ${asset} items need ${total.toFixed()} (amounts plus fees), ${e.available.toFixed()} available`;
      for (const c of group) outcome.set(c.position, { refused: message });
      continue;
    }
    group.forEach((c, i) => {
      const uid = uids[i]!;
      outcome.set(c.position, { uid });
      rows.push({
        uid,
        companyId,
        asset,
        amount: new Prisma.Decimal(c.item.amount.toFixed()),
        fee: new Prisma.Decimal(c.quote.fee.toFixed()),
        toAddress: c.item.to,
        tag: c.item.tag,
        status: 'processing',
        stage: 'queued',
        origin,
        position: c.position,
      });
    });
  }
  if (rows.length > 0) {
    await tx.withdrawal.createMany({ data: rows });
    await recordEvents(
      tx,
      rows.map((r) => withdrawalEvent({ ...r, uid: r.uid, amount: r.amount as Prisma.Decimal, fee: r.fee as Prisma.Decimal }, 'processing')),
    );
  }
  return outcome;
}

export interface WithdrawResult {
  results: ItemResult[];
  /** True when an Idempotency-Key matched an earlier request and nothing new was created. */
  replayed: boolean;
}

/** POST /api/transactions/withdraw: one result per item, in request order. */
export async function withdraw(deps: WithdrawalDeps, company: Company, input: { items: WithdrawItem[] }, idempotencyKey?: string | null): Promise<WithdrawResult> {
  const isValidAddress = addressCheck(deps.chains);
  const problems = input.items.map((item) => itemProblem(item, isValidAddress));
  const candidates: Candidate[] = input.items.flatMap((item, position) =>
    problems[position] ? [] : [{ position, item, quote: quoteWithdrawal(item.asset, item.amount) }],
  );
  const { result, replayed } = await idempotent(
    deps,
    { companyId: company.id, key: idempotencyKey, operation: 'withdraw', input, ttlMs: deps.idempotencyTtlMs },
    {
      execute: async (tx) => {
        const created = candidates.length ? await createWithdrawals(tx, company.id, candidates, 'api') : new Map();
        const results: ItemResult[] = input.items.map((_item, position) => {
          const problem = problems[position];
          if (problem) return { message: problem, success: false, uid: '' };
          const o = created.get(position)!;
          return 'uid' in o ? { message: ACCEPTED_MESSAGE, success: true, uid: o.uid } : { message: o.refused, success: false, uid: '' };
        });
        return { result: results, stored: { results: results as unknown as Prisma.InputJsonArray } };
      },
      replay: async (stored) => (stored as unknown as { results: ItemResult[] }).results,
    },
  );
  return { results: result, replayed };
}

/** The withdrawal of this merchant, or 404. */
export async function getWithdrawal(deps: Pick<WithdrawalDeps, 'db'>, company: Company, uid: string): Promise<Withdrawal> {
  const w = UUID.test(uid) ? await deps.db.withdrawal.findUnique({ where: { uid } }) : null;
  if (!w || w.companyId !== company.id) throw new NotFoundError(`No withdrawal with uid ${uid}`);
  return w;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const lockWithdrawal = async (tx: Tx, uid: string): Promise<Withdrawal | undefined> =>
  (await tx.$queryRaw<Withdrawal[]>`SELECT * FROM "Withdrawal" WHERE "uid" = ${uid}::uuid FOR UPDATE`)[0];

const totalOfRow = (w: Withdrawal): Decimal => toMoney(w.amount).plus(toMoney(w.fee));

/** Rejects a withdrawal that is not final yet, in the caller's transaction: the hold goes back to available. */
async function rejectLocked(tx: Tx, w: Withdrawal, reason: string): Promise<Withdrawal> {
  await postJournal(tx, {
    companyId: w.companyId,
    asset: w.asset,
    kind: 'withdrawal_release',
    withdrawalId: w.uid,
    postings: [
      { account: ACCOUNTS.merchantHeld, amount: totalOfRow(w).neg() },
      { account: ACCOUNTS.merchantAvailable, amount: totalOfRow(w) },
    ],
  });
  const rejected = await tx.withdrawal.update({
    where: { uid: w.uid },
    data: { status: 'rejected', stage: 'rejected', rejectReason: reason, completedAt: new Date(), updatedAt: new Date() },
  });
  await recordEvent(tx, withdrawalEvent(rejected, 'rejected'));
  return rejected;
}

/** Completes a withdrawal the chain confirmed: the hold becomes the final debit (amount out, fee to the network). */
async function completeLocked(tx: Tx, w: Withdrawal, txHash: string): Promise<Withdrawal> {
  await postJournal(tx, {
    companyId: w.companyId,
    asset: w.asset,
    kind: 'withdrawal',
    withdrawalId: w.uid,
    postings: [
      { account: ACCOUNTS.merchantHeld, amount: totalOfRow(w).neg() },
      { account: ACCOUNTS.chainExternal, amount: toMoney(w.amount) },
      { account: ACCOUNTS.networkFees, amount: toMoney(w.fee) },
    ],
  });
  const done = await tx.withdrawal.update({
    where: { uid: w.uid },
    data: { status: 'done', stage: 'done', txHash, completedAt: new Date(), updatedAt: new Date() },
  });
  await recordEvent(tx, withdrawalEvent(done, 'done', txHash));
  return done;
}

/**
 * What the chain says of an outgoing transaction. Repeats change nothing; a report for an id that is no
 * withdrawal (a refund) is ignored. A final withdrawal never changes again.
 */
export async function applyOutgoingReport(deps: WithdrawalDeps, report: OutgoingReport): Promise<Withdrawal | null> {
  if (!UUID.test(report.id)) return null;
  return commitWithEvents(deps, async (tx) => {
    const w = await lockWithdrawal(tx, report.id);
    if (!w) return null;
    if (w.stage === 'done' || w.stage === 'rejected') {
      const same = (w.stage === 'done') === (report.outcome === 'confirmed');
      if (same) return w;
      throw new ConflictError('CONFLICT', `Withdrawal ${w.uid} is already ${w.status}`);
    }
    if (w.stage !== 'sent' || w.txHash !== report.txHash) {
      throw new ConflictError('CONFLICT', `Withdrawal ${w.uid} has no transaction ${report.txHash} on chain yet`);
    }
    return report.outcome === 'confirmed' ? completeLocked(tx, w, report.txHash) : rejectLocked(tx, w, 'Failed on the blockchain');
  });
}

/**
 * Takes one withdrawal that waits for the chain (queued, or a send interrupted longer than the lease ago) and
 * moves it on: the risk hook may reject it; otherwise the intent to send is recorded (stage `sending`) before
 * the adapter is called with the withdrawal's uid, so a crash at any point leads to the same call again, never
 * to a second transaction. Answers false when there was nothing to take.
 */
export async function sendNextWithdrawal(deps: WithdrawalDeps): Promise<boolean> {
  const claimed = await commitWithEvents(deps, async (tx) => {
    const [w] = await tx.$queryRaw<Withdrawal[]>`
      SELECT * FROM "Withdrawal"
      WHERE "stage" = 'queued' OR ("stage" = 'sending' AND "updatedAt" < now() - ${deps.sendLeaseMs} * interval '1 millisecond')
      ORDER BY "createdAt", "position" LIMIT 1 FOR UPDATE SKIP LOCKED`;
    if (!w) return null;
    if (w.stage === 'queued') {
      const verdict = await deps.risk.review({ kind: 'withdrawal', companyId: w.companyId, asset: w.asset, address: w.toAddress });
      if (!verdict.allow) {
        await rejectLocked(tx, w, verdict.reason);
        return { rejected: true as const };
      }
    }
    const sending = await tx.withdrawal.update({
      where: { uid: w.uid },
      data: { stage: 'sending', sendAttempts: { increment: 1 }, updatedAt: new Date() },
    });
    return { sending };
  });
  if (!claimed) return false;
  if (!claimed.sending) return true;
  const w = claimed.sending;
  let txHash: string;
  try {
    ({ txHash } = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[w.asset as PaymentCurrency].network).send({
      id: w.uid,
      asset: w.asset as PaymentCurrency,
      to: w.toAddress,
      tag: w.tag,
      amount: toMoney(w.amount),
    }));
  } catch (e) {
    // Back to queued so the next run retries it (the same id: the adapter dedupes).
    deps.logger?.warn({ err: e, uid: w.uid }, 'withdrawal send failed; it is retried');
    await deps.db.withdrawal.updateMany({ where: { uid: w.uid, stage: 'sending' }, data: { stage: 'queued', updatedAt: new Date() } });
    return false;
  }
  await commitWithEvents(deps, async (tx) => {
    const current = await lockWithdrawal(tx, w.uid);
    // Another process that took it over after the lease may have recorded it already.
    if (current?.stage !== 'sending') return;
    const sent = await tx.withdrawal.update({ where: { uid: w.uid }, data: { stage: 'sent', txHash, sentAt: new Date(), updatedAt: new Date() } });
    await recordEvent(tx, withdrawalEvent(sent, 'processing', txHash));
  });
  return true;
}

/** Sends every withdrawal waiting for the chain; answers how many it moved on. */
export async function sendQueuedWithdrawals(deps: WithdrawalDeps, limit = 1000): Promise<number> {
  let moved = 0;
  while (moved < limit && (await sendNextWithdrawal(deps))) moved++;
  return moved;
}

/** Sum of what the given withdrawals take from the balance (amount plus fee each). */
export const heldBy = (ws: Withdrawal[]): Decimal => ws.reduce((s, w) => s.plus(totalOfRow(w)), new Money(0));

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
    take: q.limit + 1,
    ...(q.after ? { cursor: { uid: q.after }, skip: 1 } : {}),
  });
  const page = rows.slice(0, q.limit);
  return { withdrawals: page, nextCursor: rows.length > q.limit ? page.at(-1)!.uid : null };
}
