// Dashboard sign-in (docs/security.md, "Dashboard sessions"): the token typed into the dashboard is exchanged once for
// a short-lived session held in an httpOnly, SameSite=Strict cookie (Secure behind https), one per mode, so no script
// on the page ever holds the token. The session has the token's scopes and ends with it (rotation, revocation).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cookieValue, recordCredentialsChanged, sessionCookieName, type TokenAuthenticator } from '../core/auth.ts';
import type { CommitSignal } from '../core/events.ts';
import { hashToken } from '../core/tokens.ts';
import { SCOPES } from '../core/scopes.ts';
import type { Db } from '../db/client.ts';
import { AppError, UnauthenticatedError, ValidationError } from '../errors/app-error.ts';
import { clientError, errorHeaders } from '../http/edge.ts';
import { errorBody, parseJsonBody, readBody, sendJson } from '../http/io.ts';
import type { Logger } from '../logger.ts';

export const SESSION_PATH = '/dashboard/session';
/** How long a dashboard session lasts: signing in again after it is cheap, a stolen cookie's use is short. */
export const SESSION_TTL_MS = 3_600_000;

export interface SessionDeps {
  db: Db;
  auth: TokenAuthenticator;
  /** Wakes this process's bus after a sign-out committed its event. */
  events: CommitSignal;
  /** PUBLIC_BASE_URL is https: the cookie is Secure. */
  secure: boolean;
  logger: Logger;
  /** A failed sign-in counts as a failed authentication of the client (brute force); may throw 429. */
  failed(req: IncomingMessage): Promise<void>;
}

const cookie = (name: string, value: string, maxAgeSeconds: number, secure: boolean) =>
  `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;

/** POST signs in with `{"token"}`; GET names the modes signed in; DELETE signs out of every mode. True when it handled the request. */
export function dashboardSessions(deps: SessionDeps) {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string, requestId: string): Promise<boolean> => {
    if (pathname !== SESSION_PATH) return false;
    try {
      if (req.method === 'POST') {
        const body = parseJsonBody(req, await readBody(req, 4096)) as { token?: unknown } | undefined;
        const token = typeof body?.token === 'string' ? body.token.trim() : '';
        if (!token) throw new ValidationError([{ path: 'token', message: 'is required' }]);
        const found = await deps.auth.authenticate(token);
        if (!found || found.credential.kind === 'session') {
          await deps.failed(req);
          throw new UnauthenticatedError('The token is not valid');
        }
        const secret = randomBytes(32).toString('base64url');
        const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
        const scopes = SCOPES.filter((s) => found.scopes.has(s));
        await deps.db.dashboardSession.create({
          data: { tokenHash: hashToken(secret), companyId: found.company.id, via: found.credential.kind, credentialDigest: found.credential.digest, scopes, expiresAt },
        });
        // Sessions past their time are dropped as new ones come (no job needed for a table this small).
        await deps.db.dashboardSession.deleteMany({ where: { expiresAt: { lt: new Date() } } });
        res.setHeader('set-cookie', cookie(sessionCookieName(found.company.mode), secret, SESSION_TTL_MS / 1000, deps.secure));
        sendJson(res, 200, { mode: found.company.mode, scopes, expiresAt: expiresAt.toISOString() }, { 'cache-control': 'no-store' });
        return true;
      }
      if (req.method === 'GET') {
        // Which modes this browser has a live session of: the page asks before it shows anything (no 401 to read).
        const modes: string[] = [];
        for (const mode of ['test', 'live']) {
          const secret = cookieValue(req.headers.cookie, sessionCookieName(mode));
          const found = secret ? await deps.auth.dashboardSession(secret) : null;
          if (found && found.company.mode === mode) modes.push(mode);
        }
        sendJson(res, 200, { modes }, { 'cache-control': 'no-store' });
        return true;
      }
      if (req.method === 'DELETE') {
        const names = ['test', 'live'].map(sessionCookieName);
        const secrets = names.map((n) => cookieValue(req.headers.cookie, n)).filter((v): v is string => !!v && v.length <= 200);
        if (secrets.length) {
          // Ended everywhere at once: the credentials-changed event drops every instance's cached lookup of the
          // session and ends its live connections, as for a revoked key.
          await deps.db.$transaction(async (tx) => {
            const ended = await tx.dashboardSession.findMany({ where: { tokenHash: { in: secrets.map(hashToken) } }, select: { companyId: true } });
            await tx.dashboardSession.deleteMany({ where: { tokenHash: { in: secrets.map(hashToken) } } });
            for (const companyId of new Set(ended.map((s) => s.companyId))) await recordCredentialsChanged(tx, companyId, 'dashboard_session_ended');
          });
          deps.auth.invalidate();
          deps.events.committed();
        }
        res.setHeader('set-cookie', names.map((n) => cookie(n, '', 0, deps.secure)));
        sendJson(res, 204, undefined);
        return true;
      }
      res.setHeader('allow', 'GET, POST, DELETE');
      throw new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET, POST or DELETE`);
    } catch (e) {
      const error = clientError(e, (err) => deps.logger.error({ err, requestId }, 'dashboard session failed'));
      sendJson(res, error.status, errorBody(error, requestId), errorHeaders(error));
      return true;
    }
  };
}
