// Shared by the operator CLIs: run a request through the running server's admin API when a server holds the
// database (only one process may open a PGlite directory), else open the database directly.
import { readAdminState } from '../admin/server.ts';
import { loadConfigOrExit } from '../config.ts';
import { openDatabase, type Db } from '../db/client.ts';
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

/** Prints the JSON result; exits 1 on an API error. `direct` must do what the admin route does. */
export async function runAdminRequest(request: AdminRequest, direct: (db: Db) => Promise<unknown>): Promise<unknown> {
  const config = loadConfigOrExit();
  const server = readAdminState(config.adminStateFile);
  let result: unknown;
  if (server) {
    const res = await fetch(`${server.url}${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    }).catch(() =>
      fail(`The server (pid ${server.pid}) holds the database but its admin API at ${server.url} does not answer; it may be stopping. Retry in a moment.`, 1),
    );
    result = await res.json();
    if (!res.ok) fail(JSON.stringify(result), 1);
  } else {
    const db = await openDatabase({ url: config.databaseUrl, poolSize: 1 });
    try {
      result = await direct(db.prisma);
    } catch (e) {
      if (e instanceof AppError) fail(JSON.stringify({ error: { code: e.code, message: e.message, details: e.details } }), 1);
      throw e;
    } finally {
      await db.close();
    }
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return result;
}
