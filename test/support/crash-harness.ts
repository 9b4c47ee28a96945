// The scaffolding the kill -9 tests share: the real server (src/bin/server.ts) as a child process on a fresh database
// of one kind, one merchant, optionally a webhook receiver set as its webhook URL; kill -9 and restart on the same
// database; and the database opened by the test itself once no server holds it (PGlite admits one process).
// `crashHarness(kind, ...)` is called inside the test's describe: it registers the beforeAll/afterAll it needs (a
// test's own hooks registered before the call run before its setup and after its teardown).
import { afterAll, beforeAll, expect } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import type { DbKind, TestDatabase } from './databases.ts';
import { killServer, startServerProcess, stopAllChildren, type Credentials, type HttpResponse, type ServerProcess } from './processes.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { databaseUrlOf, environment, startWithMerchant } from './server-env.ts';

export type Prisma = Awaited<ReturnType<typeof openDatabase>>['prisma'];
type Mode = 'test' | 'live';

export interface CrashHarnessOptions {
  /** The merchant's name. */
  merchant: string;
  /** Added to the environment of every server run (a function: read in the harness's beforeAll, after the test's earlier ones). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** A webhook receiver per mode (true: test mode's), each verifying that mode's secret key and set as its webhook URL. */
  webhooks?: boolean | readonly Mode[];
}

export interface CrashHarness {
  /** The environment of the server runs (the database's, plus CrashHarnessOptions.env). */
  readonly env: Record<string, string>;
  readonly merchant: Credentials;
  /** The running server (throws when none is). */
  readonly server: ServerProcess;
  /** Test mode's webhook receiver (with `webhooks`). */
  readonly receiver: Receiver;
  /** A mode's webhook receiver (with `webhooks: [mode, ...]`). */
  receiverOf(mode: Mode): Receiver;
  /** Starts a server on the database, with `extra` added to its environment for this run. */
  start(extra?: Record<string, string>): Promise<ServerProcess>;
  /** Kills the server with SIGKILL (no shutdown hook runs), checks it died of it, and forgets it. */
  kill9(): Promise<void>;
  /** A request to the running server with the public token of the merchant's mode `as` (test by default; null: none). */
  api(method: string, path: string, json?: unknown, as?: Mode | null): Promise<HttpResponse>;
  /** The database as this process sees it; on PGlite only while no server holds it. */
  withDb<T>(fn: (prisma: Prisma) => Promise<T>): Promise<T>;
}

export function crashHarness(kind: DbKind, options: CrashHarnessOptions): CrashHarness {
  const databases: TestDatabase[] = [];
  let env: Record<string, string> = {};
  let server: ServerProcess | null = null;
  let merchant: Credentials | null = null;
  const receivers: Partial<Record<Mode, Receiver>> = {};
  const receiverModes: readonly Mode[] = options.webhooks === true ? ['test'] : options.webhooks || [];
  const start = async (extra: Record<string, string> = {}) => (server = await startServerProcess({ ...env, ...extra }));
  const harness: CrashHarness = {
    get env() {
      return env;
    },
    get merchant() {
      if (!merchant) throw new Error('no merchant yet (the harness\'s beforeAll makes it)');
      return merchant;
    },
    get server() {
      if (!server) throw new Error('no server is running');
      return server;
    },
    get receiver() {
      return harness.receiverOf('test');
    },
    receiverOf(mode) {
      const receiver = receivers[mode];
      if (!receiver) throw new Error(`no webhook receiver for ${mode} mode: pass webhooks`);
      return receiver;
    },
    start,
    async kill9() {
      expect(await killServer(harness.server)).toEqual({ code: null, signal: 'SIGKILL' });
      server = null;
    },
    api: (method, path, json, as = 'test') => harness.server.request(method, path, { json, token: as ? harness.merchant[as].publicToken : undefined }),
    async withDb(fn) {
      // (The directory's lock also refuses a second process; this says which precondition the test broke.)
      if (kind === 'pglite' && server) expect(server.proc.exit, 'no server holds the PGlite directory').not.toBeNull();
      const db = await openDatabase({ url: databaseUrlOf(env), migrate: false, poolSize: 1, role: 'test' });
      try {
        return await fn(db.prisma);
      } finally {
        await db.close();
      }
    },
  };

  beforeAll(async () => {
    env = { ...(await environment(kind, databases)), ...(typeof options.env === 'function' ? options.env() : options.env) };
    for (const mode of receiverModes) receivers[mode] = await startReceiver(() => harness.merchant[mode].secretKey);
    merchant = await startWithMerchant(kind, env, start, options.merchant);
    for (const mode of receiverModes) {
      const set = await harness.api('PUT', '/api/company/settings/webhook-url', { webHookUrl: receivers[mode]!.url }, mode);
      expect(set.status, set.text).toBe(200);
    }
  });

  afterAll(async () => {
    await stopAllChildren();
    for (const receiver of Object.values(receivers)) await receiver.close();
    await Promise.all(databases.map((d) => d.drop()));
  });

  return harness;
}
