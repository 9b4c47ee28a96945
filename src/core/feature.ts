// What a capability plugs into the service with: its services, REST routes, GraphQL types and jobs. The wiring
// point (src/features.ts) lists the features; nothing else needs to know them.
import type { Chains } from '../chains/registry.ts';
import type { Clock } from '../clock.ts';
import type { Database, Db } from '../db/client.ts';
import type { z } from 'zod';
import type { Route } from '../http/router.ts';
import type { Logger } from '../logger.ts';
import type { EventBus } from './bus.ts';
import type { CreditHooks } from './credits.ts';
import type { CommitSignal } from './events.ts';
import type { Metrics } from './metrics.ts';
import type { CoreConfig } from './settings.ts';
import type { Job } from './jobs.ts';

/**
 * The services API handlers reach through their context (`ctx.invoices`, ...). Each feature adds its own
 * member by declaration merging:
 *   declare module '../core/feature.ts' { interface Services { invoices: InvoiceDeps } }
 */
export interface Services {
  db: Db;
  logger: Logger;
  /** Committed events, for live subscriptions. */
  bus: EventBus;
}

/** What every feature builds on. */
export interface Platform {
  config: CoreConfig;
  database: Database;
  db: Db;
  clock: Clock;
  chains: Chains;
  bus: EventBus;
  /** What services tell once their events committed (EventDeps.events): the bus reads them, the metrics count them. */
  commits: CommitSignal;
  /** Hears, synchronously, the event types of each commit this process signals (e.g. a credentials change to act on before the answer leaves). */
  onCommitted(listener: (types: readonly string[]) => void): void;
  /** The process's metrics (docs/operations.md, "Metrics and health"); features declare theirs on it. */
  metrics: Metrics;
  /** Hooks run in the transaction of every credit to a merchant's available money. */
  credits: CreditHooks;
  /** This process is the chains worker (`npm run chains:worker`): it sends what servers with CHAIN_WORKER=0 queue. */
  chainsWorker: boolean;
  logger: Logger;
}

export interface Feature {
  name: string;
  /** Its services, built from the platform and the services of the features listed before it. */
  services?(platform: Platform, services: Services): Partial<Services>;
  /** Its REST routes (the GraphQL types register when the feature's module is imported). */
  routes?: Route<Services>[];
  /** The webhook bodies it sends, for the OpenAPI document's `webhooks` (docs/webhooks.md). */
  webhooks?: WebhookDoc[];
  /** Its background jobs in the server process. */
  jobs?(platform: Platform, services: Services): Job[];
  /** Releases what its services hold (after the jobs stopped). */
  close?(): Promise<void>;
}

/** One kind of webhook body a feature sends: its name in the OpenAPI `webhooks` map and its schema. */
export interface WebhookDoc {
  /** e.g. `invoice`; also the schema's name in the components (`InvoiceWebhook`). */
  name: string;
  summary: string;
  description: string;
  /** The body's schema: the payload exactly as the feature's event builder writes it. */
  schema: z.ZodType;
  example: unknown;
}
