// Payment links (docs/payment-links.md): a saved invoice content behind a public URL, and the limit on what its
// openings make per client address.
import type { ConfigOf } from '../core/config-section.ts';
import type { Feature } from '../core/feature.ts';
import { databaseIdentity } from '../db/identity.ts';
import type { paymentLinkConfig } from './config.ts';
import './graphql.ts';
import { openLimiter, type OpenLimiter } from './limiter.ts';
import { paymentLinkRoutes } from './rest.ts';
import type { PaymentLinkDeps } from './service.ts';

export type PaymentLinkServices = PaymentLinkDeps & { limiter: OpenLimiter };

declare module '../core/feature.ts' {
  interface Services {
    paymentLinks: PaymentLinkServices;
  }
}

export function paymentLinksFeature(config: ConfigOf<typeof paymentLinkConfig>): Feature {
  let limiter: OpenLimiter | null = null;
  return {
    name: 'payment-links',
    services: (p, services) => {
      limiter = openLimiter({
        points: config.opensPerAddress,
        windowSeconds: config.openWindowSeconds,
        redisUrl: p.config.redisUrl,
        namespace: () => databaseIdentity(p.db),
        logger: p.logger,
      });
      return { paymentLinks: { db: p.db, invoices: services.invoices, publicBaseUrl: p.config.publicBaseUrl, limiter } };
    },
    routes: paymentLinkRoutes,
    close: async () => {
      await limiter?.close();
    },
  };
}
