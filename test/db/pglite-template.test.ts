// New embedded databases copied from the install's template (src/db/pglite-template.ts) instead of initdb and the
// migrations: what the copy gives must be the database the migrations give, and nothing else may use a template.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { buildPgliteTemplate, openDatabase, type Database } from '../../src/db/client.ts';
import { MIGRATIONS_DIR, migrationsUpToDate } from '../../src/db/migrate.ts';
import { DatabaseInUseError } from '../../src/db/pglite-lock.ts';
import { currentTemplate, isLockFile, templateKey } from '../../src/db/pglite-template.ts';
import { tempDir } from '../support/processes.ts';

const rows = (db: Database) => async (sql: string) => (await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(sql));
const SCHEMA = `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
  WHERE table_schema = 'public' ORDER BY table_name, column_name`;
const INDEXES = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`;

describe('the embedded database template', { timeout: 180_000 }, () => {
  let templates: string;
  let template: string;

  beforeAll(async () => {
    templates = tempDir('payrail-templates-');
    // A template of other migrations (or another PGlite), left by an earlier install.
    fs.mkdirSync(path.join(templates, 'feedfacecafebeef'));
    fs.writeFileSync(path.join(templates, 'feedfacecafebeef', 'PG_VERSION'), '17\n');
    const built = await buildPgliteTemplate(templates);
    expect(built.built).toBe(true);
    template = built.dir;
  });

  it('is built once under its key, complete, without lock files; older keys go', async () => {
    expect(path.basename(template)).toBe(templateKey());
    expect(currentTemplate(templates)).toBe(template);
    expect(fs.readdirSync(templates).sort()).toEqual([templateKey()]);
    expect(fs.readdirSync(template).filter(isLockFile)).toEqual([]);
    expect(await buildPgliteTemplate(templates)).toEqual({ dir: template, built: false });
  });

  it('a new directory copied from it is the migrated database: same migrations, schema and indexes as initdb + migrations', async () => {
    const seeded = await openDatabase({ url: `pglite:${path.join(tempDir(), 'pglite')}`, pgliteTemplate: template, role: 'test' });
    const scratch = await openDatabase({ url: `pglite:${path.join(tempDir(), 'pglite')}`, pgliteTemplate: null, role: 'test' });
    try {
      expect(await migrationsUpToDate(rows(seeded))).toBe(true);
      const migrations = 'SELECT migration_name, checksum, applied_steps_count, logs, rolled_back_at FROM _prisma_migrations ORDER BY migration_name';
      expect(await rows(seeded)(migrations)).toEqual(await rows(scratch)(migrations));
      expect(((await rows(seeded)(migrations)) as { migration_name: string }[]).map((m) => m.migration_name)).toEqual(
        fs.readdirSync(MIGRATIONS_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort(),
      );
      expect(await rows(seeded)(SCHEMA)).toEqual(await rows(scratch)(SCHEMA));
      expect(await rows(seeded)(INDEXES)).toEqual(await rows(scratch)(INDEXES));
      expect(await seeded.prisma.company.count()).toBe(0);
    } finally {
      await seeded.close();
      await scratch.close();
    }
  });

  it('the copy is an ordinary database: locked while open, data kept across a reopen', async () => {
    const url = `pglite:${path.join(tempDir(), 'pglite')}`;
    const db = await openDatabase({ url, pgliteTemplate: template, role: 'test' });
    await expect(openDatabase({ url, pgliteTemplate: template, role: 'second' })).rejects.toBeInstanceOf(DatabaseInUseError);
    const { companyId: id } = await createCompany(db.prisma, { name: 'Seeded' });
    await db.close();
    // Reopened: an existing database, never copied over again (even with a template at hand).
    const again = await openDatabase({ url, pgliteTemplate: template, role: 'test' });
    try {
      expect((await again.prisma.company.findUniqueOrThrow({ where: { id } })).name).toBe('Seeded');
    } finally {
      await again.close();
    }
  });

  it('a copy cut short (no PG_VERSION yet) is made again on the next open', async () => {
    const dir = path.join(tempDir(), 'pglite');
    fs.mkdirSync(dir);
    fs.cpSync(path.join(template, 'global'), path.join(dir, 'global'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'global', 'pg_control'), 'torn');
    const db = await openDatabase({ url: `pglite:${dir}`, pgliteTemplate: template, role: 'test' });
    try {
      expect(await migrationsUpToDate(rows(db))).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('a template that cannot be copied costs only speed: initdb and the migrations as without one', async () => {
    const broken = path.join(tempDir('payrail-templates-'), 'broken');
    fs.cpSync(template, broken, { recursive: true });
    fs.rmSync(path.join(broken, 'PG_VERSION'));
    fs.mkdirSync(path.join(broken, 'PG_VERSION')); // copied last, and fails
    const dir = path.join(tempDir(), 'pglite');
    const db = await openDatabase({ url: `pglite:${dir}`, pgliteTemplate: broken, role: 'test' });
    try {
      expect(await migrationsUpToDate(rows(db))).toBe(true);
      expect(await db.prisma.company.count()).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('is not used without migrations (migrate: false) nor when its key does not match', async () => {
    const db = await openDatabase({ url: `pglite:${path.join(tempDir(), 'pglite')}`, migrate: false, pgliteTemplate: template, role: 'test' });
    try {
      expect(await migrationsUpToDate(rows(db))).toBe(false);
      expect(await rows(db)(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`)).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
    const other = tempDir('payrail-templates-');
    fs.cpSync(template, path.join(other, 'feedfacecafebeef'), { recursive: true });
    expect(currentTemplate(other)).toBeNull();
  });
});
