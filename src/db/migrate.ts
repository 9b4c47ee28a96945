// Applies prisma/migrations/* with Prisma's own schema engine compiled to wasm (no native binary, no network),
// recording them in _prisma_migrations exactly as `prisma migrate deploy` does.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
// @ts-expect-error plain ESM helper shared with the CLI shim
import { loadSchemaEngineWasm } from '../../scripts/schema-engine-wasm.mjs';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

export function readMigrationsList(dir: string) {
  // A missing directory (a build placed where ../../prisma does not resolve) must not pass for "no migrations".
  if (!fs.existsSync(dir)) throw new Error(`the migrations directory ${dir} does not exist`);
  const names = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const lock = path.join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: fs.existsSync(lock) ? fs.readFileSync(lock, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => {
      const file = path.join(dir, name, 'migration.sql');
      const content = fs.existsSync(file)
        ? { tag: 'ok' as const, value: fs.readFileSync(file, 'utf8') }
        : { tag: 'error' as const, value: `missing ${file}` };
      return { path: name, migrationFile: { path: 'migration.sql', content } };
    }),
  };
}

/** Rows of a query, from whichever driver is at hand. */
export type RunQuery = (sql: string) => Promise<Record<string, unknown>[]>;

/**
 * Whether the database has exactly the local migrations applied (finished, not rolled back, same checksum:
 * sha256 of migration.sql, as Prisma records it). Then the schema engine need not be loaded at all, which is
 * most of a start's cost; anything else (none applied, pending, failed, unknown) goes through the engine.
 */
export async function migrationsUpToDate(query: RunQuery, migrationsDir = MIGRATIONS_DIR): Promise<boolean> {
  let rows: Record<string, unknown>[];
  try {
    rows = await query(`SELECT "migration_name", "checksum", "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL AS "done" FROM "_prisma_migrations"`);
  } catch {
    return false;
  }
  const local = readMigrationsList(migrationsDir).migrationDirectories;
  if (rows.length !== local.length || rows.some((r) => r['done'] !== true)) return false;
  const applied = new Map(rows.map((r) => [String(r['migration_name']), String(r['checksum'])]));
  return local.every(
    (m) => m.migrationFile.content.tag === 'ok' && applied.get(m.path) === createHash('sha256').update(m.migrationFile.content.value).digest('hex'),
  );
}

export interface LocalMigration {
  name: string;
  /** sha256 of migration.sql, as Prisma records it. */
  checksum: string;
}

/** The migrations of `dir` with their checksums (read once by whoever checks them repeatedly). */
export function localMigrations(migrationsDir = MIGRATIONS_DIR): LocalMigration[] {
  return readMigrationsList(migrationsDir).migrationDirectories.map((m) => ({
    name: m.path,
    checksum: m.migrationFile.content.tag === 'ok' ? createHash('sha256').update(m.migrationFile.content.value).digest('hex') : '',
  }));
}

/**
 * The local migrations the database has not applied as they are (missing, unfinished, rolled back, or another
 * checksum). Migrations the database has beyond ours (a newer version ran) are not this check's concern.
 */
export async function unappliedMigrations(query: RunQuery, local: LocalMigration[]): Promise<string[]> {
  const rows = await query(
    `SELECT "migration_name", "checksum" FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`,
  );
  const applied = new Set(rows.map((r) => `${String(r['migration_name'])}/${String(r['checksum'])}`));
  return local.filter((m) => !applied.has(`${m.name}/${m.checksum}`)).map((m) => m.name);
}

/** Returns the names of the migrations applied now (empty when the database was up to date). */
export async function applyMigrations(
  factory: SqlMigrationAwareDriverAdapterFactory,
  migrationsDir = MIGRATIONS_DIR,
): Promise<string[]> {
  const { SchemaEngine } = await loadSchemaEngineWasm();
  const bound = bindMigrationAwareSqlAdapterFactory(factory);
  let engine: { applyMigrations(a: unknown): Promise<{ appliedMigrationNames: string[] }>; free(): void } | undefined;
  try {
    engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, bound);
    const out = await engine!.applyMigrations({
      migrationsList: readMigrationsList(migrationsDir),
      filters: { externalTables: [], externalEnums: [] },
    });
    return out.appliedMigrationNames;
  } finally {
    engine?.free();
  }
}
