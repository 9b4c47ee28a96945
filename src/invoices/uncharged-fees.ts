// The fees invoices will still charge: min(invoiceFee, paid) of each invoice with confirmed money and no fee yet
// (the fee is debited in the transaction that records the final payment). Money a debit must leave in place so
// that final payment can always be recorded; withdrawals take it from here (their deps' unchargedFees).
import { Prisma } from '../../generated/prisma/client.ts';

/**
 * The uncharged fees of a company's invoices in `asset`, as an SQL numeric expression to read in the caller's
 * statement (under its snapshot). The function is the one payrail_withdrawable subtracts under the debit lock
 * (migration 20261124000000_withdrawals).
 */
export const unchargedInvoiceFees = (companyId: string, asset: string): Prisma.Sql =>
  Prisma.sql`payrail_uncharged_invoice_fees(${companyId}::uuid, ${asset}::text)`;
