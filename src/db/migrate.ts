// Applies prisma/migrations/* with Prisma's own schema engine compiled to wasm (no native binary, no network),
// recording them in _prisma_migrations exactly as `prisma migrate deploy` does.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
// @ts-expect-error plain ESM helper shared with the CLI shim
import { loadSchemaEngineWasm } from '../../scripts/schema-engine-wasm.mjs';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

function readMigrationsList(dir: string) {
  const names = fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
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
