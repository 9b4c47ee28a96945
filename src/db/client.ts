import { PrismaClient } from '../../generated/prisma/client.ts';
import {
  PGliteAdapterFactory,
  isPostgresUrl,
  openPGlite,
  postgresAdapter,
  postgresMigrationFactory,
  postgresPool,
} from './adapters.ts';
import { applyMigrations } from './migrate.ts';

export type Db = PrismaClient;
export type { Prisma } from '../../generated/prisma/client.ts';

// Payment work queues on one invoice's row lock; under bursts a transaction may wait longer than Prisma's 2 s default.
const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 };

export interface Database {
  prisma: PrismaClient;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  url: string;
  migrate?: boolean;
  poolSize?: number;
  /** An idle connection dropped by the server (restart, admin kill): pg emits it on the pool. */
  onPoolError?: (error: Error) => void;
}

/**
 * postgresql://... -> PostgreSQL through a pg pool; pglite:<dir> -> embedded PGlite in <dir>
 * (pglite:memory:// keeps it in memory). Only one process may open a PGlite data directory.
 */
export async function openDatabase({ url, migrate = true, poolSize = 10, onPoolError }: OpenDatabaseOptions): Promise<Database> {
  if (isPostgresUrl(url)) {
    if (migrate) {
      const factory = postgresMigrationFactory(url);
      await applyMigrations(factory).finally(() => factory.close());
    }
    const pool = postgresPool(url, poolSize);
    // Without a listener an idle client's error would crash the process; pg replaces the client itself.
    pool.on('error', (e) => onPoolError?.(e));
    const prisma = new PrismaClient({ adapter: postgresAdapter(pool), errorFormat: 'minimal', transactionOptions: TRANSACTION_OPTIONS });
    return {
      prisma,
      kind: 'postgres',
      close: async () => {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  const pglite = await openPGlite(url);
  const factory = new PGliteAdapterFactory(pglite);
  if (migrate) await applyMigrations(factory);
  const prisma = new PrismaClient({ adapter: factory, errorFormat: 'minimal', transactionOptions: TRANSACTION_OPTIONS });
  return {
    prisma,
    kind: 'pglite',
    close: async () => {
      await prisma.$disconnect();
      // $disconnect() leaves PGlite open: close it to flush and release the data directory.
      await pglite.close();
    },
  };
}
