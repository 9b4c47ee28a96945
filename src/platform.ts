// What every process of the service stands on: the database, the clock, the chains and the event bus.
import { sandboxRegistry } from './chains/sandbox.ts';
import { Clock } from './clock.ts';
import { EventBus } from './core/bus.ts';
import { CreditHooks } from './core/credits.ts';
import type { Platform } from './core/feature.ts';
import type { CoreConfig } from './core/settings.ts';
import { openDatabase } from './db/client.ts';
import type { Logger } from './logger.ts';

export interface OpenPlatformOptions {
  /** Who opens the database (named in the embedded database's lock). */
  role: string;
  poolSize?: number;
}

export async function openPlatform(config: CoreConfig, logger: Logger, options: OpenPlatformOptions): Promise<Platform & { close(): Promise<void> }> {
  const database = await openDatabase({
    url: config.databaseUrl,
    poolSize: options.poolSize ?? config.dbPoolSize,
    role: options.role,
    onPoolError: (e) => logger.warn({ err: e }, 'database connection lost; the pool reconnects'),
  });
  const db = database.prisma;
  const bus = new EventBus({ db, notifications: database.notifications, logger }, { pollMs: config.eventPollMs });
  try {
    await bus.start();
  } catch (e) {
    await database.close();
    throw e;
  }
  return {
    config,
    database,
    db,
    clock: new Clock(db, config.sandbox),
    chains: sandboxRegistry({ sendFailures: config.sandboxSendFailures, db }),
    bus,
    credits: new CreditHooks(),
    logger,
    async close() {
      await bus.stop();
      await database.close();
    },
  };
}
