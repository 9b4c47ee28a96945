// Refunds leave through the chain adapter after their transaction committed; a failed or interrupted send stays
// queued and the refund-sender job retries it (adapters dedupe by the send id). The chain's verdict comes back as an
// outgoing report: final makes the refund `confirmed`; a send that failed on chain (reverted, its nonce or inputs
// taken) puts it back to `queued` under a new send id, so the client is paid by the next one, never twice.
import type { Refund } from '../../generated/prisma/client.ts';
import type { ChainRegistry, OutgoingReport } from '../chains/adapter.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { modeOfCompany } from '../core/tenants.ts';
import { toMoney } from '../domain/money.ts';
import { ConflictError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';

interface RefundDeps {
  db: Db;
  clock: Clock;
  chains: ChainRegistry;
  logger?: Logger;
}

/** Hands a queued refund to its chain adapter (of its merchant's mode); safe to repeat. */
export async function dispatchRefund(deps: RefundDeps, refund: Refund, mode: Mode): Promise<Refund | null> {
  // A server whose chains worker sends (CHAIN_WORKER=0) only queues: the worker's refund sender is woken by the event.
  if (refund.status !== 'queued' || !isPaymentCurrency(refund.asset) || !deps.chains.sendsHere) return null;
  try {
    const { txHash } = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[refund.asset].network, mode).send({
      id: refundSendId(refund),
      purpose: 'refund',
      asset: refund.asset,
      to: refund.toAddress,
      tag: refund.tag,
      amount: toMoney(refund.amount),
    });
    // Only the attempt that was sent: a refund whose earlier send failed meanwhile is not marked by a stale answer.
    const sentAt = await deps.clock.now(refund.companyId);
    const { count } = await deps.db.refund.updateMany({ where: { id: refund.id, status: 'queued', failedSends: refund.failedSends }, data: { status: 'sent', txHash, sentAt } });
    return count === 1 ? { ...refund, status: 'sent', txHash, sentAt } : null;
  } catch (e) {
    deps.logger?.warn({ err: e, refundId: refund.id }, 'refund send failed; it stays queued and is retried');
    return null;
  }
}

/** Sends refunds left queued by a crash or a failed send. */
export async function dispatchQueuedRefunds(deps: RefundDeps): Promise<number> {
  const queued = await deps.db.$queryRaw<(Refund & { mode: Mode })[]>`
    SELECT r.*, c."mode" FROM "Refund" r JOIN "Company" c ON c."id" = r."companyId"
    WHERE r."status" = 'queued' ORDER BY r."createdAt" LIMIT 100`;
  let sent = 0;
  for (const { mode, ...r } of queued) if (await dispatchRefund(deps, r, mode)) sent++;
  return sent;
}

/** The id a refund's send goes out under: the refund id, then `<id>.<n>` after n sends failed on chain. */
export const refundSendId = (refund: Pick<Refund, 'id' | 'failedSends'>) => (refund.failedSends === 0 ? refund.id : `${refund.id}.${refund.failedSends}`);

const SEND_ID = /^([0-9a-f-]{36})(?:\.([1-9][0-9]{0,8}))?$/;

/**
 * What the chain says of a refund's send. Repeats and reports of an earlier, failed attempt change nothing; a report
 * for a send not recorded yet (a crash between broadcast and record) is refused with a conflict and comes again.
 */
export async function applyRefundOutcome(deps: RefundDeps, report: OutgoingReport, mode: Mode): Promise<Refund | null> {
  const m = SEND_ID.exec(report.id);
  if (!m) return null;
  const attempt = m[2] ? Number(m[2]) : 0;
  const known = await deps.db.refund.findUnique({ where: { id: m[1]! }, select: { companyId: true } });
  // Only a refund of the reporting chain's mode: the sandbox chain's outcomes never touch a live refund.
  if (!known || (await modeOfCompany(deps.db, known.companyId)) !== mode) return null;
  // Read before the transaction: on the embedded database a query outside it would wait for its one connection.
  const now = await deps.clock.now(known.companyId);
  return deps.db.$transaction(async (tx) => {
    const [refund] = await tx.$queryRaw<Refund[]>`SELECT * FROM "Refund" WHERE "id" = ${m[1]}::uuid FOR UPDATE`;
    if (!refund || attempt !== refund.failedSends || refund.status === 'confirmed') return refund ?? null;
    if (refund.status !== 'sent') throw new ConflictError('CONFLICT', `Refund ${refund.id} has no transaction on chain recorded yet`);
    if (report.outcome === 'confirmed') {
      return tx.refund.update({ where: { id: refund.id }, data: { status: 'confirmed', txHash: report.txHash, confirmedAt: now } });
    }
    deps.logger?.error(
      { refundId: refund.id, invoiceId: refund.invoiceId, txHash: report.txHash },
      'a refund failed on chain; it is queued again and goes out under a new send id',
    );
    return tx.refund.update({ where: { id: refund.id }, data: { status: 'queued', failedSends: refund.failedSends + 1, txHash: null, sentAt: null } });
  });
}
