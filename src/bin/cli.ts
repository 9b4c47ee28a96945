// Shared by the operator CLIs: run a request through the running server's admin API when that server serves
// this CLI's database (only one process may open a PGlite directory), else open the database directly.
// Either way the CLI says on stderr which database it used and how.
import { DATABASE_HEADER, readAdminState } from '../admin/server.ts';
import { loadConfigOrExit } from '../config.ts';
import { DamagedDatabaseError, databaseLabel } from '../db/adapters.ts';
import { openDatabase, type Db } from '../db/client.ts';
import { DatabaseInUseError } from '../db/pglite-lock.ts';
import { AppError } from '../errors/app-error.ts';

export interface AdminRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

export function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const note = (message: string) => process.stderr.write(`${message}\n`);

/** A request to the running server's admin API; answers its JSON (an error answer: message and exit 1). */
export type AdminCall = (request: AdminRequest) => Promise<unknown>;

/**
 * Runs `viaServer` with calls to the running server's admin API when that server serves this CLI's database, else
 * `direct` on the database opened here (closed before this returns). Says on stderr which it is.
 */
export async function withDatabase<T>(role: string, viaServer: (call: AdminCall) => Promise<T>, direct: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfigOrExit();
  const database = databaseLabel(config.databaseUrl);
  const server = readAdminState(config.adminStateFile);
  if (server && server.database === database) {
    note(`database: ${database} (through the running server, pid ${server.pid})`);
    return viaServer(async (request) => {
      const res = await fetch(`${server.url}${request.path}`, {
        method: request.method,
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
      }).catch(() =>
        fail(`The server (pid ${server.pid}) holds the database but its admin API at ${server.url} does not answer; it may be stopping. Retry in a moment.`, 1),
      );
      // The state file could be stale in a way the pid check misses (a reused pid): the server names its database.
      const served = res.headers.get(DATABASE_HEADER);
      if (served !== database) fail(`The admin API at ${server.url} serves ${served ?? 'an unknown database'}, not ${database}; nothing was done.`, 1);
      const result = await res.json();
      if (!res.ok) fail(JSON.stringify(result), 1);
      return result;
    });
  }
  note(`database: ${database} (opened directly${server ? `; the server in this DATA_DIR, pid ${server.pid}, serves ${server.database}` : ''})`);
  const db = await openDatabase({ url: config.databaseUrl, poolSize: 1, role, preparedStatements: config.dbPreparedStatements }).catch((e: unknown) => {
    if (e instanceof DatabaseInUseError) fail(`${e.message}. Run this command with the DATA_DIR and DATABASE_URL of that server.`, 1);
    if (e instanceof DamagedDatabaseError) fail(e.message, 1);
    throw e;
  });
  if (db.uncleanShutdown) {
    note(`note: the database was not closed by its previous process (pid ${db.uncleanShutdown.pid}, ${db.uncleanShutdown.role}); it was recovered from its write-ahead log. Run npm run ledger:verify to check it.`);
  }
  let result: T;
  try {
    result = await direct(db.prisma);
  } catch (error) {
    // Closed before any exit: an embedded database is flushed and its lock released.
    await db.close();
    if (error instanceof AppError) fail(JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } }), 1);
    throw error;
  }
  await db.close();
  return result;
}

/** Prints the JSON result; exits 1 on an API error. `direct` must do what the admin route does. */
export async function runAdminRequest(request: AdminRequest, direct: (db: Db) => Promise<unknown>, role = 'operator CLI'): Promise<unknown> {
  const result = await withDatabase(role, (call) => call(request), direct);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return result;
}
