// What a withdrawal could take now, as a preview. The withdrawable amount is the withdrawals' rule
// (payrail_withdrawable in their migration): available money less the fees invoices will still charge.
import type { Db } from '../db/client.ts';
import { Money } from '../domain/money.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';

/**
 * What a withdrawal could take now (available less the fees invoices will still charge), read without the debit
 * lock: a preview (withdrawal quotes); the withdrawal itself checks exactly (payrail_withdrawable).
 */
export async function withdrawableNow(db: Db, companyId: string, asset: string): Promise<Money> {
  const [row] = await db.$queryRaw<{ withdrawable: string }[]>`
    SELECT ((SELECT COALESCE(SUM("amount"), 0) FROM "Balance"
             WHERE "companyId" = ${companyId}::uuid AND "asset" = ${asset} AND "account" = ${ACCOUNTS.merchantAvailable})
          - payrail_uncharged_invoice_fees(${companyId}::uuid, ${asset}::text))::text AS "withdrawable"`;
  return new Money(row!.withdrawable);
}
