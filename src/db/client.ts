import fs from 'node:fs';
import path from 'node:path';
import { PrismaClient, type Prisma as PrismaNs } from '../../generated/prisma/client.ts';
import type pg from 'pg';
import {
  PGliteAdapterFactory,
  isPostgresUrl,
  openPGlite,
  postgresAdapter,
  postgresMigrationFactory,
  postgresPool,
} from './adapters.ts';
import { registerDirect } from './direct.ts';
import { applyMigrations, migrationsUpToDate } from './migrate.ts';
import type { LockOwner } from './pglite-lock.ts';
import { inProcessNotifications, postgresNotifications, type Notifications } from './notifications.ts';
import { currentTemplate, isLockFile, templateKey, TEMPLATES_DIR } from './pglite-template.ts';

export type Db = PrismaClient;
export type { Prisma } from '../../generated/prisma/client.ts';

// Payment work queues on one invoice's row lock; under bursts a transaction may wait longer than Prisma's 2 s default.
const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 };

export interface Database {
  prisma: PrismaClient;
  kind: 'postgres' | 'pglite';
  /** Change signals between the processes on this database. */
  notifications: Notifications;
  /** PostgreSQL: the connection pool's use now (PGlite is one connection inside the process: no pool). */
  pool?: () => PoolUse;
  /** Embedded only: the previous process left without closing it (PGlite recovered it from its WAL). */
  uncleanShutdown?: LockOwner | null;
  close(): Promise<void>;
}

/** A pg pool's connections now: open (idle or in use), idle, and callers waiting for one; max is its size. */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export const poolUse = (pool: pg.Pool, max: number) => (): PoolUse => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max });

/** Deadlock, serialization failure, write conflict, or no connection for the transaction in time. */
export function isTransientTransactionError(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown; cause?: { originalCode?: unknown } } | null;
  const code = String(err?.code ?? '');
  const original = String(err?.cause?.originalCode ?? '');
  return (
    code === 'P2034' || code === 'P2028' || original === '40P01' || original === '40001' ||
    /deadlock detected|could not serialize access/i.test(String(err?.message ?? ''))
  );
}

/**
 * An interactive transaction, retried (with a short random backoff) when the database gave up on it for
 * reasons that say nothing about the work itself. `fn` must only touch the database: it may run again.
 */
export async function transactionWithRetry<T>(db: PrismaClient, fn: (tx: PrismaNs.TransactionClient) => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(fn);
    } catch (e) {
      if (attempt >= attempts || !isTransientTransactionError(e)) throw e;
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 40));
    }
  }
}

/**
 * A read for monitoring (metrics, readiness) that the database abandons after `ms` (statement_timeout for this
 * transaction only), so a slow database never holds a connection for long; callers bound their wait as well, which
 * also covers waiting for a connection. PGlite cannot interrupt a statement; there the caller's bound is all.
 */
export async function boundedRead<T>(db: PrismaClient, ms: number, query: PrismaNs.Sql): Promise<T[]> {
  const [, rows] = await db.$transaction([db.$queryRaw`SELECT set_config('statement_timeout', ${String(Math.ceil(ms))}, true)`, db.$queryRaw<T[]>(query)]);
  return rows;
}

export interface OpenDatabaseOptions {
  url: string;
  migrate?: boolean;
  poolSize?: number;
  /** An idle connection dropped by the server (restart, admin kill): pg emits it on the pool. */
  onPoolError?: (error: Error) => void;
  /** Who opens it, named in the embedded database's lock (`server`, `merchant CLI`, ...). */
  role?: string;
  /**
   * Embedded, with `migrate`: the migrated data directory a new database is copied from. Default: this install's,
   * if built (pglite-template.ts); null: always initdb and migrate.
   */
  pgliteTemplate?: string | null;
  /** PostgreSQL: statements marked `prepared` run as named statements (db/prepared.ts). Default: true. */
  preparedStatements?: boolean;
}

/** A Prisma client on a pg pool, configured as every PostgreSQL client of the service. */
export function postgresClient(pool: pg.Pool, preparedStatements: boolean): PrismaClient {
  const client = new PrismaClient({ adapter: postgresAdapter(pool, preparedStatements), errorFormat: 'minimal', transactionOptions: TRANSACTION_OPTIONS });
  registerDirect(client, pool, preparedStatements);
  return client;
}

/**
 * postgresql://... -> PostgreSQL through a pg pool; pglite:<dir> -> embedded PGlite in <dir>
 * (pglite:memory:// keeps it in memory). Only one process may open a PGlite data directory.
 */
export async function openDatabase({ url, migrate = true, poolSize = 10, onPoolError, role = 'payrail', pgliteTemplate, preparedStatements = true }: OpenDatabaseOptions): Promise<Database> {
  if (isPostgresUrl(url)) {
    const pool = postgresPool(url, poolSize);
    // Without a listener an idle client's error would crash the process; pg replaces the client itself.
    pool.on('error', (e) => onPoolError?.(e));
    if (migrate && !(await migrationsUpToDate(async (sql) => (await pool.query(sql)).rows))) {
      const factory = postgresMigrationFactory(url);
      await applyMigrations(factory)
        .finally(() => factory.close())
        .catch(async (e: unknown) => {
          await pool.end();
          throw e;
        });
    }
    const prisma = postgresClient(pool, preparedStatements);
    const notifications = postgresNotifications(url, pool, (e) => onPoolError?.(e));
    return {
      prisma,
      kind: 'postgres',
      notifications,
      pool: poolUse(pool, poolSize),
      close: async () => {
        await notifications.close();
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  const pglite = await openPGlite(url, role, () => (!migrate ? null : pgliteTemplate === undefined ? currentTemplate() : pgliteTemplate));
  const factory = new PGliteAdapterFactory(pglite.client);
  try {
    if (migrate && !(await migrationsUpToDate(async (sql) => (await pglite.client.query<Record<string, unknown>>(sql)).rows))) await applyMigrations(factory);
  } catch (e) {
    await pglite.close();
    throw e;
  }
  const prisma = new PrismaClient({ adapter: factory, errorFormat: 'minimal', transactionOptions: TRANSACTION_OPTIONS });
  return {
    prisma,
    kind: 'pglite',
    notifications: inProcessNotifications(),
    uncleanShutdown: pglite.uncleanShutdown,
    close: async () => {
      await prisma.$disconnect();
      // $disconnect() leaves PGlite open: close it to flush and release the data directory (and its lock).
      await pglite.close();
    },
  };
}

/**
 * Builds this install's template for new embedded databases (pglite-template.ts): initdb and the migrations in a
 * scratch directory, renamed into place once complete. An existing template of the same key is kept.
 */
export async function buildPgliteTemplate(templatesDir = TEMPLATES_DIR): Promise<{ dir: string; built: boolean }> {
  const key = templateKey();
  const dir = path.join(templatesDir, key);
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return { dir, built: false };
  fs.mkdirSync(templatesDir, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(templatesDir, '.scratch-'));
  try {
    const db = await openDatabase({ url: `pglite:${scratch}`, role: 'template build', pgliteTemplate: null });
    await db.close();
    for (const name of fs.readdirSync(scratch)) if (isLockFile(name)) fs.rmSync(path.join(scratch, name), { force: true });
    try {
      // Whatever is there without PG_VERSION is no template (a removal cut short).
      if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(scratch, dir);
    } catch (e) {
      // Another build finished first: keep its copy.
      if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) throw e;
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  // Templates of other migrations or another PGlite are never used again; nor are scratch directories of builds
  // killed an hour ago or more.
  for (const name of fs.readdirSync(templatesDir)) {
    const file = path.join(templatesDir, name);
    const abandoned = name.startsWith('.scratch-') && Date.now() - fs.statSync(file).mtimeMs > 3_600_000;
    if ((name !== key && !name.startsWith('.')) || abandoned) fs.rmSync(file, { recursive: true, force: true });
  }
  return { dir, built: true };
}
