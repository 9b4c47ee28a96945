import type { Db } from '../db/client.ts';
import { formatPlain, Money, toMoney } from '../domain/money.ts';
import type { BalanceBucket } from './ledger.ts';

export interface AssetBalance {
  /** Payment currency (asset plus network). */
  asset: string;
  /** Confirmed money of the merchant that a withdrawal or refund may take. */
  available: string;
  /** Taken by operations in flight (a withdrawal's amount plus fee, an autoswap's source): back to available if rejected or failed, gone when done. */
  held: string;
  /** Seen on chain for open invoices and static addresses, not yet confirmed. */
  pending: string;
  /** Received in an asset or network an invoice did not expect; held apart until resolved. */
  suspense: string;
}

/**
 * The merchant's balances per asset. `buckets`: every account that is the merchant's money and the balance it counts
 * in (ledger.ts balanceBuckets: the ledger's own and those features declare).
 */
export async function companyBalances(db: Db, companyId: string, buckets: ReadonlyMap<string, BalanceBucket>): Promise<AssetBalance[]> {
  const [balances, pending] = await Promise.all([
    // A balance is the sum of its shards.
    db.balance.groupBy({
      by: ['asset', 'account'],
      where: { companyId, account: { in: [...buckets.keys()] } },
      _sum: { amount: true },
    }),
    db.chainTransfer.groupBy({ by: ['asset'], where: { companyId, state: 'seen', role: { in: ['payment', 'deposit'] } }, _sum: { amount: true } }),
  ]);
  const byAsset = new Map<string, { available: Money; held: Money; pending: Money; suspense: Money }>();
  const row = (asset: string) => {
    let r = byAsset.get(asset);
    if (!r) byAsset.set(asset, (r = { available: new Money(0), held: new Money(0), pending: new Money(0), suspense: new Money(0) }));
    return r;
  };
  for (const b of balances) {
    const r = row(b.asset);
    const f = buckets.get(b.account)!;
    r[f] = r[f].plus(toMoney(b._sum.amount ?? 0));
  }
  for (const p of pending) row(p.asset).pending = toMoney(p._sum.amount ?? 0);
  return [...byAsset.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([asset, r]) => ({
      asset,
      available: formatPlain(r.available),
      held: formatPlain(r.held),
      pending: formatPlain(r.pending),
      suspense: formatPlain(r.suspense),
    }));
}
