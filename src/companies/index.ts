// The merchant's settings and money: the store settings, underpayment limits and balances (merchants themselves are
// made by the CLI).
import type { EventDeps } from '../core/events.ts';
import type { Feature } from '../core/feature.ts';
import { balanceBuckets, type BalanceBucket } from '../ledger/ledger.ts';
import './graphql.ts';
import { companyRoutes } from './rest.ts';

declare module '../core/feature.ts' {
  interface Services {
    /** The store settings' writer (docs/api-decisions.md, "Store settings"). */
    store: EventDeps;
    /** Every account that is the merchant's money and the balance it counts in (the ledger's own and the features' declared ones). */
    balanceAccounts: ReadonlyMap<string, BalanceBucket>;
  }
}

export function companiesFeature(): Feature {
  return { name: 'companies', services: (p) => ({ store: { db: p.db, events: p.commits }, balanceAccounts: balanceBuckets(p.declared.ledgerAccounts) }), routes: companyRoutes };
}
