// Features that act on the merchant's money as it arrives (auto-withdrawals) register here; features that credit it
// (payments, deposits) run the hooks in the transaction of the credit, so what a hook does commits with it.
import type { Decimal } from 'decimal.js';
import type { Prisma } from '../../generated/prisma/client.ts';
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

export class CreditHooks {
  private readonly hooks: CreditHook[] = [];

  add(hook: CreditHook): void {
    this.hooks.push(hook);
  }

  /** Called after a credit to merchant_available was posted, in its transaction. */
  async credited(tx: Prisma.TransactionClient, credit: Credit): Promise<void> {
    for (const hook of this.hooks) await hook(tx, credit);
  }
}
