// Autoswap: credits converted to the currency the merchant keeps (docs/autoswap.md). Listed before withdrawals in
// features.ts: its credit hook runs before the auto-withdrawal hook.
import type { ConfigOf } from '../core/config-section.ts';
import type { Feature } from '../core/feature.ts';
import { chainJob, intervalJob, wakingOn } from '../core/jobs.ts';
import { Money } from '../domain/money.ts';
import type { autoswapConfig } from './config.ts';
import './graphql.ts';
import { AUTOSWAP_QUEUED, autoswapDeclarations } from './declarations.ts';
import { autoswapWebhook } from './webhook-doc.ts';
import { autoswapRoutes } from './rest.ts';
import { autoswapOnCredit, autoswapScope, driveAutoswaps, type AutoswapDeps } from './service.ts';
import { VenueRegistry } from './venues/registry.ts';
import { sandboxVenue } from './venues/sandbox.ts';

declare module '../core/feature.ts' {
  interface Services {
    autoswap: AutoswapDeps;
  }
}

export function autoswapFeature(config: ConfigOf<typeof autoswapConfig>): Feature {
  return {
    name: 'autoswap',
    declares: autoswapDeclarations,
    services: (p, s) => {
      const rates = s.invoices.rates;
      const venueDeps = { db: p.db, chains: p.chains, rates, logger: p.logger };
      const autoswap: AutoswapDeps = {
        db: p.db,
        events: p.commits,
        venues: VenueRegistry.build(config.swap, venueDeps, p.config.sandbox ? sandboxVenue(p.db, rates) : null),
        rates,
        credits: p.credits,
        logger: p.logger,
        settings: {
          leaseMs: config.leaseMs,
          retryMs: config.retryMs,
          maxAttempts: config.maxAttempts,
          deadlineMs: config.deadlineMs,
          feePercent: config.feePercent ?? new Money(0),
        },
      };
      p.credits.add(autoswapOnCredit, autoswapScope);
      return { autoswap };
    },
    routes: autoswapRoutes,
    webhooks: [autoswapWebhook],
    jobs: (p, s) => [
      // Woken by the commits that queued a swap, not only on its interval.
      chainJob(wakingOn(intervalJob('autoswap-driver', config.intervalMs, () => driveAutoswaps(s.autoswap), p.logger), p.bus, (m) => m.type === AUTOSWAP_QUEUED)),
    ],
  };
}
