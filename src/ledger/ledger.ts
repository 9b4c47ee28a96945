import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { Prisma } from '../../generated/prisma/client.ts';
import { Money } from '../domain/money.ts';

type Tx = Prisma.TransactionClient;

/** Accounts per company and asset. The merchant's money is `merchant_available`; the rest are counter-accounts. */
export const ACCOUNTS = {
  /** Money on chain outside our addresses: debited when a payment arrives, credited when we send. */
  chainExternal: 'chain_external',
  merchantAvailable: 'merchant_available',
  /** Arrived at an invoice address in an asset or network the invoice does not expect; held apart. */
  merchantSuspense: 'merchant_suspense',
  platformFees: 'platform_fees',
  networkFees: 'network_fees',
} as const;

export type Account = (typeof ACCOUNTS)[keyof typeof ACCOUNTS];

export interface Posting {
  account: Account;
  amount: Decimal;
}

export interface Journal {
  companyId: string;
  asset: string;
  kind: 'payment' | 'late_payment' | 'unexpected_asset' | 'fee' | 'refund';
  postings: Posting[];
  invoiceId?: string | null;
  transferId?: string | null;
  refundId?: string | null;
}

/** Writes one balanced journal and moves the running balances, in the caller's transaction. */
export async function postJournal(tx: Tx, journal: Journal): Promise<void> {
  const postings = journal.postings.filter((p) => !p.amount.isZero());
  const sum = postings.reduce((s, p) => s.plus(p.amount), new Money(0));
  if (!sum.isZero()) throw new Error(`unbalanced journal ${journal.kind}: sums to ${sum.toFixed()}`);
  if (postings.length === 0) return;
  const journalId = randomUUID();
  await tx.ledgerEntry.createMany({
    data: postings.map((p) => ({
      id: randomUUID(),
      journalId,
      companyId: journal.companyId,
      asset: journal.asset,
      account: p.account,
      amount: p.amount.toFixed(),
      kind: journal.kind,
      invoiceId: journal.invoiceId ?? null,
      transferId: journal.transferId ?? null,
      refundId: journal.refundId ?? null,
    })),
  });
  // One statement for all accounts. Rows in account order: every transaction locks shared Balance rows in the
  // same order, so two journals on the same accounts (a payment and a refund, say) cannot deadlock.
  const byAccount = new Map<string, Decimal>();
  for (const p of postings) byAccount.set(p.account, (byAccount.get(p.account) ?? new Money(0)).plus(p.amount));
  const rows = [...byAccount.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([account, amount]) => Prisma.sql`(${journal.companyId}::uuid, ${journal.asset}, ${account}, ${amount.toFixed()}::numeric, now())`);
  await tx.$executeRaw`
    INSERT INTO "Balance" ("companyId", "asset", "account", "amount", "updatedAt")
    VALUES ${Prisma.join(rows)}
    ON CONFLICT ("companyId", "asset", "account")
    DO UPDATE SET "amount" = "Balance"."amount" + EXCLUDED."amount", "updatedAt" = now()`;
}
