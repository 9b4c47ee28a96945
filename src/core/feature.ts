// What a capability plugs into the service with: its services, REST routes, GraphQL types and jobs. The wiring
// point (src/features.ts) lists the features; nothing else needs to know them. The layers above core add their part
// of the contract by declaration merging (http/router.ts: Feature.routes; chains/registry.ts: Platform.chains), so
// core imports neither.
import type { Clock } from '../clock.ts';
import type { Database, Db } from '../db/client.ts';
import type { z } from 'zod';
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
  /** Every feature's declarations, merged (core/declarations.ts). */
  declared: Declared;
}

/**
 * What a feature names that the layers below must handle without knowing it (merged by core/declarations.ts). Its
 * types are registries too: a feature adds its event types, journal kinds, ledger accounts and outgoing purposes to
 * EventTypes (domain/event-types.ts), JournalKinds and LedgerAccounts (ledger/ledger.ts) and OutgoingPurposes
 * (chains/adapter.ts) by declaration merging, so the ledger takes only declared kinds and accounts and the chains
 * only declared purposes. ledger/ledger.ts adds `ledgerAccounts` and ledger/verify.ts `ledgerChecks` here the same way.
 */
export interface Declarations {
  /** Its merchant-facing event types (webhooks, the event feed; GraphQL's EventType enum), each with its description. */
  eventTypes?: Readonly<Record<string, string>>;
  /** Its events for the service's own processes: never pushed, not in the feed. */
  internalEventTypes?: readonly string[];
  /** Subjects whose status changes are counted (payrail_<subject>_transitions_total), with the counter's help; the statuses are its event types `<subject>.<status>`. */
  transitions?: Readonly<Record<string, string>>;
  /** The kinds of the ledger journals it posts. */
  journalKinds?: readonly string[];
  /** What it pays out on chain: the chains report each send's outcome to the listener of its purpose. */
  outgoingPurposes?: readonly string[];
  /**
   * Those of its outgoing purposes it follows itself (it reads its sends' outcomes from the chain, as autoswap's
   * venues do): their outcomes go to no listener, and registering one is refused.
   */
  selfFollowedPurposes?: readonly string[];
}

export type LedgerCheckOf = NonNullable<Declarations['ledgerChecks']>[number];
export type LedgerAccountOf = NonNullable<Declarations['ledgerAccounts']>[string];

/** Every feature's declarations together. */
export interface Declared {
  /** Merchant-facing event types (webhooks, the event feed) and their descriptions, in feature order. */
  eventTypes: Readonly<Record<string, string>>;
  /** Events for the service's own processes: no webhook, not in the feed, not redeliverable (core's own included). */
  internalEventTypes: readonly string[];
  /** Subjects whose status changes are counted, with the counter's help. */
  transitions: Readonly<Record<string, string>>;
  journalKinds: readonly string[];
  /** The features' ledger accounts (the ledger's own not included). */
  ledgerAccounts: Readonly<Record<string, LedgerAccountOf>>;
  /** Every declared outgoing purpose, the self-followed ones included. */
  outgoingPurposes: readonly string[];
  selfFollowedPurposes: readonly string[];
  ledgerChecks: readonly LedgerCheckOf[];
}

export interface Feature {
  name: string;
  /** Its names the layers below handle (event types, journal kinds, ledger accounts and checks, metrics subjects, outgoing purposes). */
  declares?: Declarations;
  /** Its services, built from the platform and the services of the features listed before it. */
  services?(platform: Platform, services: Services): Partial<Services>;
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
