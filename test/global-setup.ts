// Once per test run: migrated templates of both databases, cloned per test database (a PostgreSQL template
// database; a PGlite data directory, copied, which spares each test PGlite's initdb and the migrations).
import { randomBytes } from 'node:crypto';
import { build } from 'esbuild';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { applyMigrations } from '../src/db/migrate.ts';
import { postgresMigrationFactory } from '../src/db/adapters.ts';
import { openDatabase } from '../src/db/client.ts';
import { buildWebAssets, webAssetsFresh } from '../src/web/assets.ts';
import { anvilBinary } from './support/anvil-node.ts';
import { DEFAULT_LITECOIND } from './support/litecoind-node.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | null;
    pgTemplate: string | null;
    pgliteTemplate: string;
    childBundles: Record<string, string>;
    /** Redis for the multi-instance tests (TEST_REDIS_URL); null only locally when none answers. */
    redisUrl: string | null;
    /** Chromium for the browser tests (TEST_CHROMIUM, default Debian's /usr/bin/chromium); null only locally when missing. */
    chromium: string | null;
    /** litecoind for the UTXO adapter's tests (TEST_LITECOIND, default Debian's); null only locally when missing. */
    litecoind: string | null;
    /** anvil for the EVM adapter's tests (@foundry-rs/anvil's platform package); null only locally when missing. */
    anvil: string | null;
  }
}

/** The browser the page tests drive; in CI (or when named explicitly) it must be there. */
function findChromium(): string | null {
  const path = process.env['TEST_CHROMIUM'] ?? '/usr/bin/chromium';
  if (fs.existsSync(path)) return path;
  if (process.env['TEST_CHROMIUM'] || process.env['CI']) throw new Error(`TEST_CHROMIUM ${path} not found (Debian package chromium)`);
  console.warn(`\n!!! ${path} is missing: the browser tests do not run. Install Debian's chromium or set TEST_CHROMIUM.\n`);
  return null;
}

/** The node the UTXO adapter's tests run in regtest mode; in CI (or when named explicitly) it must be there. */
function findLitecoind(): string | null {
  const path = process.env['TEST_LITECOIND'] ?? DEFAULT_LITECOIND;
  if (fs.existsSync(path)) return path;
  if (process.env['TEST_LITECOIND'] || process.env['CI']) throw new Error(`TEST_LITECOIND ${path} not found (Debian package litecoind)`);
  console.warn(`\n!!! ${path} is missing: the UTXO chain tests do not run. Install Debian's litecoind or set TEST_LITECOIND.\n`);
  return null;
}

/** The anvil npm ci installed with @foundry-rs/anvil (a platform package: none for an unsupported platform). */
function findAnvil(): string | null {
  let binary: string | null = null;
  try {
    binary = anvilBinary();
  } catch {
    // no platform package for this machine
  }
  if (binary && fs.existsSync(binary)) return binary;
  if (process.env['CI']) throw new Error(`anvil not found${binary ? ` at ${binary}` : ''} (npm ci installs it with @foundry-rs/anvil)`);
  console.warn(`\n!!! anvil is missing${binary ? ` at ${binary}` : ''}: the EVM chain tests do not run. Run npm ci on a platform @foundry-rs/anvil supports.\n`);
  return null;
}

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** TEST_REDIS_URL (default the local service) if it answers PING; in CI or when set explicitly it must. */
async function findRedis(): Promise<string | null> {
  const url = process.env['TEST_REDIS_URL'] ?? DEFAULT_REDIS_URL;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return url;
  } catch (e) {
    if (process.env['TEST_REDIS_URL'] || process.env['CI']) throw new Error(`TEST_REDIS_URL unreachable: ${(e as Error).message}`);
    console.warn(`\n!!! Redis at ${url} is unreachable: the multi-instance tests do not run. Set TEST_REDIS_URL.\n`);
    return null;
  } finally {
    client.disconnect();
  }
}

/**
 * The entry points the black-box tests start as child processes, compiled once per run by esbuild (the compiler
 * tsx uses) into one file each, beside the sources so relative paths (prisma/migrations) resolve as from src/.
 * A child then starts without tsx compiling and resolving its module graph on every start: ~1.2 s of CPU each,
 * over some seventy starts. The lifecycle tests still start the real `node --import tsx` command as well.
 */
async function buildChildBundles(): Promise<Record<string, string>> {
  const root = path.resolve(import.meta.dirname, '..');
  const outdir = path.join(root, '.test-build', 'bin');
  const entries: Record<string, string> = {
    'src/bin/server.ts': 'main',
    'src/bin/merchant.ts': 'merchant',
    'src/bin/ledger-verify.ts': 'ledger-verify',
    'src/bin/signer-xpubs.ts': 'signer-xpubs',
    'src/bin/webhooks-worker.ts': 'webhooks-worker',
    'src/bin/chains-worker.ts': 'chains-worker',
  };
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([src, name]) => [name, path.join(root, src)])),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  return Object.fromEntries(Object.entries(entries).map(([src, name]) => [src, path.join(outdir, `${name}.mjs`)]));
}

const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export default async function setup(project: TestProject) {
  project.provide('childBundles', await buildChildBundles());
  project.provide('redisUrl', await findRedis());
  project.provide('chromium', findChromium());
  project.provide('litecoind', findLitecoind());
  project.provide('anvil', findAnvil());
  // The pages' bundle, once for the run (servers started by the tests then find it fresh).
  if (!webAssetsFresh()) await buildWebAssets();

  const pgliteTemplate = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-pglite-tpl-'));
  const pglite = await openDatabase({ url: `pglite:${pgliteTemplate}`, role: 'test template' });
  await pglite.close();
  project.provide('pgliteTemplate', pgliteTemplate);
  const dropPgliteTemplate = () => fs.rmSync(pgliteTemplate, { recursive: true, force: true });

  const adminUrl = process.env['TEST_DATABASE_URL'] ?? DEFAULT_URL;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (e) {
    if (process.env['TEST_DATABASE_URL'] || process.env['CI']) throw new Error(`TEST_DATABASE_URL unreachable: ${(e as Error).message}`);
    console.warn(`\n!!! PostgreSQL at ${DEFAULT_URL} is unreachable: database tests run on PGlite only. Set TEST_DATABASE_URL.\n`);
    project.provide('pgAdminUrl', null);
    project.provide('pgTemplate', null);
    return dropPgliteTemplate;
  }
  const template = `payrail_tpl_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${template}`);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const factory = postgresMigrationFactory(templateUrl.toString());
  await applyMigrations(factory).finally(() => factory.close());
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);

  return async () => {
    // Drop the template and whatever clones a crashed test file left behind.
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [template, `${template.replace('tpl', 't')}%`],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await admin.end();
    dropPgliteTemplate();
  };
}
