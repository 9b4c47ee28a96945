// Refunds leave through the chain adapter after their transaction committed; a failed or interrupted send stays
// queued and the refund-sender job retries it (adapters dedupe by refund id).
import type { Refund } from '../../generated/prisma/client.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import { toMoney } from '../domain/money.ts';
import type { Logger } from '../logger.ts';

interface RefundDeps {
  db: Db;
  clock: Clock;
  chains: ChainRegistry;
  logger?: Logger;
}

/** Hands a queued refund to its chain adapter; safe to repeat. */
export async function dispatchRefund(deps: RefundDeps, refund: Refund): Promise<Refund | null> {
  if (refund.status !== 'queued' || !isPaymentCurrency(refund.asset)) return null;
  try {
    const { txHash } = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[refund.asset].network).send({
      id: refund.id,
      purpose: 'refund',
      asset: refund.asset,
      to: refund.toAddress,
      tag: refund.tag,
      amount: toMoney(refund.amount),
    });
    return await deps.db.refund.update({ where: { id: refund.id }, data: { status: 'sent', txHash, sentAt: await deps.clock.now(refund.companyId) } });
  } catch (e) {
    deps.logger?.warn({ err: e, refundId: refund.id }, 'refund send failed; it stays queued and is retried');
    return null;
  }
}

/** Sends refunds left queued by a crash or a failed send. */
export async function dispatchQueuedRefunds(deps: RefundDeps): Promise<number> {
  const queued = await deps.db.refund.findMany({ where: { status: 'queued' }, take: 100, orderBy: { createdAt: 'asc' } });
  let sent = 0;
  for (const r of queued) if (await dispatchRefund(deps, r)) sent++;
  return sent;
}
