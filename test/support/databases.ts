import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';

export type DbKind = 'pglite' | 'postgres';

/** Every database test runs on both; PostgreSQL only drops out locally when no server is reachable. */
export const DATABASES: DbKind[] = inject('pgTemplate') ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A migrated PGlite data directory at `dir` (created), copied from the run's template. */
export function copyPgliteTemplate(dir: string): string {
  fs.cpSync(inject('pgliteTemplate'), dir, { recursive: true });
  return dir;
}

/** A fresh database: a copy of the run's migrated PGlite template, or a PostgreSQL clone of its template. */
export async function freshDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const dir = copyPgliteTemplate(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-db-')), 'pglite'));
    return { url: `pglite:${dir}`, drop: async () => fs.rmSync(path.dirname(dir), { recursive: true, force: true }) };
  }
  const adminUrl = inject('pgAdminUrl')!;
  const template = inject('pgTemplate')!;
  const name = `${template.replace('tpl', 't')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // PostgreSQL refuses to copy a template another session is copying at the same moment (55006): retry.
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== '55006' || attempt >= 50) throw e;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
    }
  }
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
