// Accepting withdrawals: the rules, the balance check and the hold of amount plus fee, with their first event, in
// one statement per asset (docs/withdrawals.md).
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import { recordAudit } from '../core/audit.ts';
import type { Company } from '../core/auth.ts';
import { eventsCtes } from '../core/events.ts';
import { idempotent } from '../core/idempotency.ts';
import type { Actor } from '../core/scopes.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { ACCOUNTS, postDebitIfCovered } from '../ledger/ledger.ts';
import { withdrawalEvent, type WithdrawalDeps } from './model.ts';
import { payoutGuard } from './protection.ts';
import { itemProblem, quoteWithdrawal, totalOf, type WithdrawalQuote, type WithdrawItem } from './rules.ts';

type Tx = Prisma.TransactionClient;

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
