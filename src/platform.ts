// What every process of the service stands on: the database, the clock, the chains and the event bus.
import { databaseIdentity } from './db/identity.ts';
import { readChainsFile } from './chains/config.ts';
import { openChains, type Chains } from './chains/registry.ts';
import { Signer } from './chains/signer.ts';
import { Clock } from './clock.ts';
import { EventBus, type BusFanout } from './core/bus.ts';
import { setPlants } from './core/plant.ts';
import { redisFanout } from './core/redis-fanout.ts';
import { CreditHooks } from './core/credits.ts';
import type { Declared, Platform } from './core/feature.ts';
import { noMetrics, type Metrics } from './core/metrics.ts';
import type { CoreConfig } from './core/settings.ts';
import { openDatabase, type Db } from './db/client.ts';
import type { Logger } from './logger.ts';
import { transitionCounters } from './ops/transitions.ts';

export interface OpenPlatformOptions {
  /** Who opens the database (named in the embedded database's lock). */
  role: string;
  /** This process sends on chain (withdrawals, refunds): it loads the signer. */
  signer?: boolean;
  /** It watches the chains and sends on them (CHAIN_WORKER=1 on a server; the chains worker). Default true. */
  chainWork?: boolean;
  /** It is the chains worker (npm run chains:worker). */
  chainsWorker?: boolean;
  poolSize?: number;
  /** Where this process's metrics go (the server's registry); none by default. */
  metrics?: Metrics;
  /** The features' declarations (src/features.ts `declared`): what its commits count, what the event feed leaves out. */
  declared: Declared;
}

/** One channel per database (db/identity.ts). */
const fanoutChannel = async (db: Db): Promise<string> => `payrail:events:${await databaseIdentity(db)}`;

export async function openPlatform(config: CoreConfig, logger: Logger, options: OpenPlatformOptions): Promise<Platform & { close(): Promise<void> }> {
  setPlants(config.soakPlant);
  const database = await openDatabase({
    url: config.databaseUrl,
    poolSize: options.poolSize ?? config.dbPoolSize,
    role: options.role,
    preparedStatements: config.dbPreparedStatements,
    onPoolError: (e) => logger.warn({ err: e }, 'database connection lost; the pool reconnects'),
  });
  const db = database.prisma;
  let fanout: BusFanout | undefined;
  let bus: EventBus;
  let chains: Chains;
  try {
    chains = await openChains({
      file: readChainsFile(config.chainsFile),
      sandbox: config.sandbox,
      db,
      logger,
      // Only processes that send on chain hold the signer (the server's withdrawal and refund senders, or the worker's).
      signer: options.signer ? Signer.fromConfig(config) : null,
      chainWork: options.chainWork ?? true,
      sandboxSendFailures: config.sandboxSendFailures,
      metrics: options.metrics ?? noMetrics,
      selfFollowed: options.declared.selfFollowedPurposes,
    });
    fanout = config.redisUrl ? await redisFanout(config.redisUrl, await fanoutChannel(db), logger) : undefined;
    bus = new EventBus({ db, notifications: database.notifications, logger, fanout }, { pollMs: config.eventPollMs });
    await bus.start();
  } catch (e) {
    await fanout?.close();
    await database.close();
    throw e;
  }
  const metrics = options.metrics ?? noMetrics;
  const countTransitions = transitionCounters(metrics, options.declared);
  const commitListeners: ((types: readonly string[]) => void)[] = [];
  return {
    config,
    database,
    db,
    clock: new Clock(db, config.sandbox),
    chains,
    bus,
    commits: {
      committed(types) {
        bus.committed();
        if (types?.length) {
          countTransitions(types);
          for (const listener of commitListeners) listener(types);
        }
      },
    },
    onCommitted: (listener) => void commitListeners.push(listener),
    metrics,
    credits: new CreditHooks(),
    chainsWorker: options.chainsWorker ?? false,
    logger,
    declared: options.declared,
    async close() {
      await bus.stop();
      await fanout?.close();
      await database.close();
    },
  };
}
