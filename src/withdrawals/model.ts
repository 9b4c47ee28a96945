// A withdrawal's shared vocabulary: what its services need, its statuses, and the event each change writes.
import type { Prisma, Withdrawal } from '../../generated/prisma/client.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import type { EventDeps, NewEvent } from '../core/events.ts';
import { jsonNumber } from '../core/json.ts';
import type { RiskHook } from '../core/risk.ts';
import type { EventType } from '../domain/event-types.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, toMoney } from '../domain/money.ts';
import type { Logger } from '../logger.ts';

export interface WithdrawalDeps extends EventDeps {
  chains: ChainRegistry;
  /** The tenant's clock: the payout policy's cool-down runs on it (the test clock in test mode). */
  clock: Clock;
  risk: RiskHook;
  logger?: Logger;
  idempotencyTtlMs: number;
  sendLeaseMs: number;
  /** The fees invoices will still charge in an asset, as SQL (invoices' unchargedFees): what a withdrawal leaves in place. */
  unchargedFees: (companyId: string, asset: string) => Prisma.Sql;
}

export type WithdrawalStatus = 'processing' | 'done' | 'rejected';
export const WITHDRAWAL_STATUSES = ['processing', 'done', 'rejected'] as const satisfies readonly WithdrawalStatus[];

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
