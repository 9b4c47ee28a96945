// Static deposit addresses: a permanent address per merchant user and asset; deposits credited like payments.
import { depositWebhook } from './webhook-doc.ts';
import type { Feature } from '../core/feature.ts';
import { denyList } from '../core/risk.ts';
import { depositDeclarations } from './declarations.ts';
import './graphql.ts';
import { depositRoutes } from './rest.ts';
import type { DepositDeps } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    deposits: DepositDeps;
  }
}

export function depositsFeature(): Feature {
  return {
    name: 'deposits',
    declares: depositDeclarations,
    services: (p, s) => ({
      deposits: { db: p.db, events: p.commits, chains: p.chains, clock: p.clock, fees: s.invoices.fees, risk: denyList(p.config.riskDenyList), credits: p.credits, logger: p.logger },
    }),
    routes: depositRoutes,
    webhooks: [depositWebhook],
  };
}
