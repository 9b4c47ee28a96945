// How a withdrawal ends: done (the hold becomes the final debit) or rejected (the hold is released), from the
// chain's report or the risk hook, each with its journal and its event in one transaction.
import { z } from 'zod';
import type { Prisma, Withdrawal } from '../../generated/prisma/client.ts';
import type { OutgoingReport } from '../chains/adapter.ts';
import { commitWithEvents, recordEvent } from '../core/events.ts';
import { modeOfCompany } from '../core/tenants.ts';
import type { Mode } from '../domain/modes.ts';
import { toMoney } from '../domain/money.ts';
import { ConflictError } from '../errors/app-error.ts';
import { ACCOUNTS, postJournal } from '../ledger/ledger.ts';
import { withdrawalEvent, type WithdrawalDeps } from './model.ts';

type Tx = Prisma.TransactionClient;

export const lockWithdrawal = async (tx: Tx, uid: string): Promise<Withdrawal | undefined> =>
  (await tx.$queryRaw<Withdrawal[]>`SELECT * FROM "Withdrawal" WHERE "uid" = ${uid}::uuid FOR UPDATE`)[0];

export type Outcome = { status: 'done'; txHash: string } | { status: 'rejected'; reason: string };

/**
 * Finishes a withdrawal that is not final yet, in the caller's transaction: done turns the hold into the final
 * debit (amount out to the chain, fee to the network); rejected gives the hold back to available.
 */
export async function finishLocked(tx: Tx, w: Withdrawal, outcome: Outcome): Promise<Withdrawal> {
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
