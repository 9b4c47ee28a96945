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

export interface Database {
  prisma: PrismaClient;
  kind: 'postgres' | 'pglite';
  /** Runs raw SQL outside Prisma (benchmarks, tests). */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  url: string;
  migrate?: boolean;
  poolSize?: number;
}

/**
 * postgresql://... -> PostgreSQL through a pg pool; pglite:<dir> -> embedded PGlite in <dir>
 * (pglite:memory:// keeps it in memory). Only one process may open a PGlite data directory.
 */
export async function openDatabase({ url, migrate = true, poolSize = 10 }: OpenDatabaseOptions): Promise<Database> {
  if (isPostgresUrl(url)) {
    if (migrate) await applyMigrations(postgresMigrationFactory(url));
    const pool = postgresPool(url, poolSize);
    const prisma = new PrismaClient({ adapter: postgresAdapter(pool) });
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
  const prisma = new PrismaClient({ adapter: factory });
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
