import { randomBytes, randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { App } from '../app.ts';
import { databaseLabel } from '../db/adapters.ts';
import { UnauthenticatedError } from '../errors/app-error.ts';
import { errorBody, sendJson } from '../http/io.ts';
import { listen } from '../http/listen.ts';
import { createRestHandler } from '../http/rest.ts';
import { Router } from '../http/router.ts';
import { adminRoutes, type AdminContext } from './routes.ts';

/** What the CLI reads to find a running server: written 0600 at start, removed at stop. */
export interface AdminState {
  pid: number;
  url: string;
  token: string;
  /** The database the server serves (databaseLabel): a CLI on another database must not use this server. */
  database: string;
}

/** Every admin answer names the database behind it, so a client can check it talks to the right one. */
export const DATABASE_HEADER = 'x-payrail-database';

const sha = (s: string) => createHash('sha256').update(s).digest();

export interface AdminServer {
  url: string;
  /** Stops the listener; the state file stays, so no CLI opens the database while the server still holds it. */
  stop(): Promise<void>;
  /** Removes the state file: call once the database is closed. */
  releaseStateFile(): void;
}

export async function startAdminServer(app: App): Promise<AdminServer> {
  const { config, logger } = app;
  const token = config.adminToken ?? randomBytes(32).toString('base64url');
  const expected = sha(token);
  const rest = createRestHandler(new Router<AdminContext>().add(...adminRoutes), { db: app.db.prisma, auth: app.auth, events: app.platform.commits, custody: app.platform.chains.custodySources(), declared: app.platform.declared }, {
    bodyLimitBytes: 65_536,
    session: async () => null,
    clientAddress: (req) => req.socket.remoteAddress ?? 'unknown',
    logger,
  });
  const database = databaseLabel(config.databaseUrl);
  const server: Server = createServer((req, res) => {
    const requestId = randomUUID();
    res.setHeader('x-request-id', requestId);
    res.setHeader(DATABASE_HEADER, database);
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(sha(m[1]!), expected)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendJson(res, 401, errorBody(new UnauthenticatedError('The operator token is missing or wrong'), requestId));
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    // /metrics, /health/live and /health/ready, with the reasons of failing checks (docs/operations.md).
    app.ops
      .serveAdmin(req, res, url.pathname, requestId)
      .then((served) => (served ? undefined : rest(req, res, url, requestId)))
      .catch((e) => {
        logger.error({ err: e }, 'admin request failed');
        res.destroy();
      });
  });
  const { url, stop } = await listen(server, config.adminPort, config.adminHost);
  const state: AdminState = { pid: process.pid, url, token, database };
  fs.mkdirSync(path.dirname(config.adminStateFile), { recursive: true });
  fs.writeFileSync(config.adminStateFile, JSON.stringify(state), { mode: 0o600 });
  return {
    url,
    stop,
    releaseStateFile() {
      try {
        const current = JSON.parse(fs.readFileSync(config.adminStateFile, 'utf8')) as AdminState;
        if (current.pid === process.pid) fs.rmSync(config.adminStateFile, { force: true });
      } catch {
        // already gone
      }
    },
  };
}

/** The state of a live server, or null when none runs (a stale file from a crash is ignored). */
export function readAdminState(file: string): AdminState | null {
  let state: AdminState;
  try {
    state = JSON.parse(fs.readFileSync(file, 'utf8')) as AdminState;
  } catch {
    return null;
  }
  try {
    process.kill(state.pid, 0);
    return state;
  } catch {
    return null;
  }
}
