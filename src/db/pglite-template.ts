// A new embedded database starts as a copy of a template directory instead of running PGlite's initdb (a second
// PostgreSQL instance in WebAssembly: ~4 s of CPU, most of a first start) and then the migrations. The template is
// built once per install (`node scripts/prepare-start.mjs`, run by postinstall) and named by what it holds: the
// PGlite version and every migration file. Anything else (no template, other migrations, another PGlite) falls
// back to initdb and the migrations as before.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MIGRATIONS_DIR, readMigrationsList } from './migrate.ts';

export const TEMPLATES_DIR = path.resolve(MIGRATIONS_DIR, '..', '..', '.build', 'pglite-template');

/** Files of ours inside a data directory that a template must not carry (src/db/pglite-lock.ts). */
export const isLockFile = (name: string): boolean => /^\.?payrail\.lock\./.test(name);

function pgliteVersion(): string {
  // The package does not export its package.json: find it above its entry point.
  let dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite') return String(pkg.version);
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the version of @electric-sql/pglite');
    dir = up;
  }
}

/** Names what a template holds; a template of another key is never used. */
export function templateKey(migrationsDir = MIGRATIONS_DIR): string {
  const hash = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const m of readMigrationsList(migrationsDir).migrationDirectories) {
    hash.update(`${m.path}\n${m.migrationFile.content.tag}\n${m.migrationFile.content.value}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** The template directory for the current PGlite and migrations, or null when none was built (or none can be named). */
export function currentTemplate(templatesDir = TEMPLATES_DIR): string | null {
  try {
    const dir = path.join(templatesDir, templateKey());
    return fs.existsSync(path.join(dir, 'PG_VERSION')) ? dir : null;
  } catch {
    return null; // only speed depends on a template
  }
}

/**
 * Copies a template into a data directory that holds no database (its lock file may already be there). PG_VERSION
 * goes last: PGlite takes a directory without it for empty, so a copy cut short by a crash is simply made again.
 * A copy that fails is removed and false returned: the caller creates the database as without a template.
 */
export function seedFromTemplate(template: string, dataDir: string): boolean {
  const names = fs.readdirSync(template).filter((n) => n !== 'PG_VERSION' && !isLockFile(n));
  try {
    for (const name of names) {
      fs.cpSync(path.join(template, name), path.join(dataDir, name), { recursive: true, force: true, mode: fs.constants.COPYFILE_FICLONE });
    }
    fs.copyFileSync(path.join(template, 'PG_VERSION'), path.join(dataDir, 'PG_VERSION'));
    return true;
  } catch {
    for (const name of [...names, 'PG_VERSION']) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    return false;
  }
}
