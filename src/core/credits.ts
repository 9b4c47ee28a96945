// Features that act on the merchant's money as it arrives (auto-withdrawals) register here; features that credit it
// (payments, deposits) run the hooks in the transaction of the credit, so what a hook does commits with it.
import type { Decimal } from 'decimal.js';
import { Prisma } from '../../generated/prisma/client.ts';
import type { JournalKind } from '../ledger/ledger.ts';

export interface Credit {
  companyId: string;
  /** Payment currency (asset plus network). */
  asset: string;
  amount: Decimal;
  /** What was credited, when known: the invoice, the chain transfer (payment or deposit) and the address it reached. */
  invoiceId?: string | null;
  transferId?: string | null;
  addressId?: string | null;
  /** The kind of the journal that credited it, when a feature's hook made the credit itself (an autoswap's proceeds): so that hook can leave it alone. */
  kind?: JournalKind;
}

export type CreditHook = (tx: Prisma.TransactionClient, credit: Credit) => Promise<void>;

/**
 * Whether a hook may act on a credit of (companyId, asset), as an SQL boolean (e.g. an enabled rule exists): a
 * credit for which no hook may act can be booked in one statement, without running the hooks.
 */
export type CreditHookScope = (companyId: Prisma.Sql, asset: Prisma.Sql) => Prisma.Sql;

export class CreditHooks {
  private readonly hooks: CreditHook[] = [];
  private readonly scopes: (CreditHookScope | null)[] = [];

  /** `scope`: when the hook may act; without one it may act on every credit. */
  add(hook: CreditHook, scope?: CreditHookScope): void {
    this.hooks.push(hook);
    this.scopes.push(scope ?? null);
  }

  /** An SQL boolean: true when some hook may act on a credit of (companyId, asset). */
  mayAct(companyId: Prisma.Sql, asset: Prisma.Sql): Prisma.Sql {
    if (this.scopes.length === 0) return Prisma.sql`FALSE`;
    if (this.scopes.some((s) => s === null)) return Prisma.sql`TRUE`;
    return Prisma.sql`(${Prisma.join(this.scopes.map((s) => s!(companyId, asset)), ' OR ')})`;
  }

  /** Called after a credit to merchant_available was posted, in its transaction. */
  async credited(tx: Prisma.TransactionClient, credit: Credit): Promise<void> {
    for (const hook of this.hooks) await hook(tx, credit);
  }
}
