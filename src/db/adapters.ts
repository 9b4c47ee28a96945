import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { statementNamer } from './prepared.ts';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';
import { acquireLock, type LockOwner } from './pglite-lock.ts';
import { seedFromTemplate } from './pglite-template.ts';

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/** `pglite:./data/pglite` -> `./data/pglite`; `pglite:memory://` -> `memory://` (in-memory). */
export const pgliteDir = (url: string): string => url.replace(/^(pglite|file):(\/\/(?!\/))?/i, '');

type ErrorMapping = SqlDriverAdapter & { onError(e: unknown): never };

/**
 * Two bugs of pglite-prisma-adapter 0.7.2, each of which reports failure as success:
 * - `executeScript` does not await `exec()`, so a failing migration would be recorded as applied;
 * - a transaction's `commit()` resolves even when COMMIT fails (its promise is caught and dropped once the
 *   transaction has started), so Prisma would answer for a transaction the database rolled back.
 * Both are replaced here; queries keep the adapter's own code (its prototype, bound to the transaction).
 */
function fixPgliteAdapter(adapter: SqlDriverAdapter, client: PGlite): SqlDriverAdapter {
  const a = adapter as ErrorMapping;
  a.executeScript = async (script: string) => {
    try {
      await client.exec(script);
    } catch (e) {
      a.onError(e);
    }
  };
  a.startTransaction = async (isolationLevel?: string) => {
    if (isolationLevel) await client.exec(`SET TRANSACTION ISOLATION LEVEL ${isolationLevel}`).catch((e: unknown) => a.onError(e));
    return new Promise<Transaction>((resolve, reject) => {
      let started = false;
      let finish: () => void = () => {};
      // PGlite runs BEGIN, the callback, then COMMIT (or ROLLBACK after tx.rollback()); `outcome` carries COMMIT's error.
      const outcome = client.transaction(async (tx) => {
        started = true;
        const done = new Promise<void>((r) => (finish = r));
        const transaction: Transaction = Object.assign(Object.create(Object.getPrototypeOf(a) as object) as Transaction, {
          client: tx,
          options: { usePhantomQuery: true },
          commit: async () => {
            finish();
            await outcome.catch((e: unknown) => a.onError(e));
          },
          rollback: async () => {
            await tx.rollback();
            finish();
            await outcome.catch((e: unknown) => a.onError(e));
          },
        });
        resolve(transaction);
        await done;
      });
      outcome.catch((e: unknown) => {
        if (!started) reject(e);
      });
    }).catch((e: unknown) => a.onError(e));
  };
  return a;
}

export class PGliteAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName = 'pglite-prisma-adapter';
  private readonly inner: PrismaPGlite;
  constructor(private readonly client: PGlite) {
    this.inner = new PrismaPGlite(client);
  }
  async connect() {
    return fixPgliteAdapter(await this.inner.connect(), this.client);
  }
  async connectToShadowDb() {
    const shadow = new PGlite();
    const adapter = fixPgliteAdapter(await new PrismaPGlite(shadow).connect(), shadow);
    adapter.dispose = async () => {
      await shadow.close();
    };
    return adapter;
  }
}

export const isInMemory = (url: string): boolean => ['', 'memory://'].includes(pgliteDir(url));

/** The database a URL names, for people: the absolute PGlite directory, or the PostgreSQL URL without its password. */
export function databaseLabel(url: string): string {
  if (isPostgresUrl(url)) {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  }
  return isInMemory(url) ? 'pglite:memory://' : `pglite:${path.resolve(pgliteDir(url))}`;
}

export interface OpenedPGlite {
  client: PGlite;
  /** Set when the previous process left without closing the database (kill -9, crash, power loss). */
  uncleanShutdown: LockOwner | null;
  close(): Promise<void>;
}

/** An embedded data directory PGlite cannot open: what happened and what to do, for the operator. */
export class DamagedDatabaseError extends Error {
  constructor(dir: string, cause: unknown) {
    super(
      `The embedded database in ${dir} could not be opened (${(cause as Error)?.message ?? String(cause)}); it is damaged. ` +
        'Stop every process using it, then restore the directory from a backup (a copy taken while the server was stopped), ' +
        'or move it aside to start with an empty database. See docs/operations.md.',
    );
    this.name = 'DamagedDatabaseError';
  }
}

/**
 * Opens (creating if needed) a PGlite database, holding its directory's lock until closed. A new directory starts
 * as a copy of `template` (a migrated database, see pglite-template.ts) when one is given.
 */
export async function openPGlite(url: string, role: string, template: () => string | null = () => null): Promise<OpenedPGlite> {
  if (isInMemory(url)) {
    const client = await PGlite.create();
    return { client, uncleanShutdown: null, close: () => client.close() };
  }
  const dir = path.resolve(pgliteDir(url));
  const lock = acquireLock(dir, role);
  const existed = fs.existsSync(path.join(dir, 'PG_VERSION'));
  try {
    if (!existed) {
      const from = template();
      if (from) seedFromTemplate(from, dir); // when it fails, PGlite runs initdb as without a template
    }
    const client = await PGlite.create(dir);
    return {
      client,
      uncleanShutdown: lock.abandonedBy,
      close: async () => {
        try {
          await client.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (e) {
    lock.release();
    throw existed ? new DamagedDatabaseError(dir, e) : e;
  }
}

/**
 * @prisma/adapter-pg 7.10.1 splits scripts on `;` (non-atomic, breaks `$$` bodies) and cannot read the
 * `"char"` type (OID 18) that the schema engine queries. Migrations go through this fixed adapter.
 */
function migrationSafePg(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const a = adapter as ErrorMapping & {
    client: pg.Pool;
    performIO: (q: unknown) => Promise<{ fields?: { dataTypeID: number }[] }>;
  };
  const performIO = a.performIO.bind(a);
  a.performIO = async (query) => {
    const res = await performIO(query);
    for (const f of res?.fields ?? []) if (f.dataTypeID === 18) f.dataTypeID = 25;
    return res;
  };
  a.executeScript = async (script: string) => {
    try {
      await a.client.query(script);
    } catch (e) {
      a.onError(e);
    }
  };
  return a;
}

export interface ClosableMigrationFactory extends SqlMigrationAwareDriverAdapterFactory {
  /** Ends every connection it opened (a lingering one would block CREATE DATABASE ... TEMPLATE). */
  close(): Promise<void>;
}

export function postgresMigrationFactory(url: string): ClosableMigrationFactory {
  const main = new PrismaPg({ connectionString: url, max: 1 });
  const opened: SqlDriverAdapter[] = [];
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    connect: async () => {
      const adapter = migrationSafePg(await main.connect());
      opened.push(adapter);
      return adapter;
    },
    close: async () => {
      await Promise.all(opened.splice(0).map((a) => a.dispose()));
    },
    connectToShadowDb: async () => {
      throw new Error('applying migrations needs no shadow database');
    },
  };
}

export function postgresPool(url: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString: url, max });
}

/** `preparedStatements`: statements marked `prepared` (prepared.ts) run as named statements. */
export function postgresAdapter(pool: pg.Pool, preparedStatements: boolean): PrismaPg {
  // adapter-pg types the generator as always naming; an undefined name is pg's unnamed statement.
  const statementNameGenerator = preparedStatements ? (statementNamer() as (query: { sql: string }) => string) : undefined;
  return new PrismaPg(pool, { disposeExternalPool: false, statementNameGenerator });
}
