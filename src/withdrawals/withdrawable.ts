// What a withdrawal could take now, as a preview. The withdrawable amount is the withdrawals' rule
// (payrail_withdrawable in their migration): available money less the fees invoices will still charge (invoices'
// SQL, reached through the deps).
import { Money } from '../domain/money.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import type { WithdrawalDeps } from './model.ts';

/**
 * What a withdrawal could take now (available less the fees invoices will still charge), read without the debit
 * lock: a preview (withdrawal quotes); the withdrawal itself checks exactly (payrail_withdrawable).
 */
export async function withdrawableNow(deps: Pick<WithdrawalDeps, 'db' | 'unchargedFees'>, companyId: string, asset: string): Promise<Money> {
  const [row] = await deps.db.$queryRaw<{ withdrawable: string }[]>`
    SELECT ((SELECT COALESCE(SUM("amount"), 0) FROM "Balance"
             WHERE "companyId" = ${companyId}::uuid AND "asset" = ${asset} AND "account" = ${ACCOUNTS.merchantAvailable})
          - ${deps.unchargedFees(companyId, asset)})::text AS "withdrawable"`;
  return new Money(row!.withdrawable);
}
