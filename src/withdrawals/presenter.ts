import type { Withdrawal } from '../../generated/prisma/client.ts';
import { formatPlain, toMoney } from '../domain/money.ts';

/** A withdrawal as REST reads show it (amounts as exact strings, like every amount we compute). */
export interface WithdrawalView {
  uid: string;
  status: string;
  asset: string;
  amount: string;
  fee: string;
  /** amount + fee: what it took from the balance. */
  total: string;
  to: string;
  tag: string | null;
  txHash: string | null;
  origin: string;
  rejectReason: string | null;
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
}

export const presentWithdrawal = (w: Withdrawal): WithdrawalView => ({
  uid: w.uid,
  status: w.status,
  asset: w.asset,
  amount: formatPlain(toMoney(w.amount)),
  fee: formatPlain(toMoney(w.fee)),
  total: formatPlain(toMoney(w.amount).plus(toMoney(w.fee))),
  to: w.toAddress,
  tag: w.tag,
  txHash: w.txHash,
  origin: w.origin,
  rejectReason: w.rejectReason,
  createdAt: w.createdAt.toISOString(),
  sentAt: w.sentAt?.toISOString() ?? null,
  completedAt: w.completedAt?.toISOString() ?? null,
});
