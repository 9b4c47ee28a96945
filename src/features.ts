// The one wiring point: every capability of the service, in dependency order. A new feature adds its line here
// (and its config section in config.ts); see docs/architecture.md.
import { companiesFeature } from './companies/index.ts';
import { depositsFeature } from './deposits/index.ts';
import { exportsFeature } from './exports/index.ts';
import { loadConfig, type Config } from './config.ts';
import type { Feature, Platform, Services } from './core/feature.ts';
import type { Job } from './core/jobs.ts';
import { graphqlSchema, printedSchema } from './graphql/schema.ts';
import type { Route } from './http/router.ts';
import { invoicesFeature } from './invoices/index.ts';
import { paymentsFeature } from './payments/index.ts';
import { sandboxFeature } from './sandbox/index.ts';
import { webhooksFeature } from './webhooks/index.ts';
import { withdrawalsFeature } from './withdrawals/index.ts';

export const features = (config: Config): Feature[] => [
  companiesFeature(),
  invoicesFeature(config.invoices),
  paymentsFeature(),
  sandboxFeature(),
  webhooksFeature(config.webhooks),
  withdrawalsFeature(config.withdrawals),
  depositsFeature(),
  exportsFeature(config.exports),
];

/** Every REST route of the public API listener (routes do not depend on the configuration: defaults do). */
export const apiRoutes: Route<Services>[] = features(loadConfig({})).flatMap((f) => f.routes ?? []);

export interface AssembledFeatures {
  services: Services;
  routes: Route<Services>[];
  jobs: Job[];
  close(): Promise<void>;
}

/** Builds every feature's services, in order, on the platform. */
export function assemble(config: Config, platform: Platform): AssembledFeatures {
  const list = features(config);
  const services = { db: platform.db, logger: platform.logger, bus: platform.bus } as Services;
  for (const feature of list) Object.assign(services, feature.services?.(platform, services));
  return {
    services,
    routes: list.flatMap((f) => f.routes ?? []),
    jobs: list.flatMap((f) => f.jobs?.(platform, services) ?? []),
    close: async () => {
      for (const f of list) await f.close?.();
    },
  };
}

export { graphqlSchema, printedSchema };
