import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Company } from '../companies/service.ts';
import { isTransientTransactionError } from '../db/client.ts';
import { AppError, UnauthenticatedError, ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';
import { findInputProblem } from './input-guard.ts';
import { errorBody, parseJsonBody, readBody, sendJson } from './io.ts';
import type { Router } from './router.ts';

export interface RestOptions {
  bodyLimitBytes: number;
  authenticate: (token: string) => Promise<Company | null>;
  logger: Logger;
  /** Extra headers on every answer (e.g. CORS for the public API). */
  headers?: Record<string, string>;
}

/** `Authorization: Bearer <token>` -> token; null when absent; throws 401 when present but not Bearer. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header === '') return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) throw new UnauthenticatedError('The Authorization header must be `Bearer <public token>`');
  return m[1]!;
}

export function createRestHandler<Ctx>(router: Router<Ctx>, ctx: Ctx, options: RestOptions) {
  const baseHeaders = options.headers ?? {};
  return async function handle(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
    try {
      const method = req.method ?? 'GET';
      const match = router.match(method, url.pathname);
      if (match.kind === 'not-found') throw new AppError('NOT_FOUND', `No route for ${method} ${url.pathname}`);
      if (match.kind === 'method-not-allowed') {
        res.setHeader('allow', match.allow.join(', '));
        throw new AppError('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${match.allow.join(' or ')}`);
      }
      const { route, params } = match;
      const query = Object.fromEntries(url.searchParams);
      const badParam = findInputProblem(params) ?? findInputProblem(query);
      if (badParam) throw new ValidationError([badParam]);
      let company: Company | null = null;
      if (route.auth !== 'none') {
        const token = bearerToken(req.headers.authorization);
        if (token !== null) {
          company = await options.authenticate(token);
          if (!company) throw new UnauthenticatedError('The bearer token is not valid');
        } else if (route.auth === 'required') {
          throw new UnauthenticatedError();
        }
      }
      const raw = method === 'GET' ? Buffer.alloc(0) : await readBody(req, options.bodyLimitBytes);
      const body = parseJsonBody(req, raw);
      const badBody = findInputProblem(body);
      if (badBody) throw new ValidationError([badBody]);
      const out = await route.handler({ params, query: url.searchParams, body, headers: req.headers, company, requestId }, ctx);
      sendJson(res, out.status, out.body, { ...baseHeaders, ...out.headers });
    } catch (e) {
      const error =
        e instanceof AppError
          ? e
          : isTransientTransactionError(e)
            ? new AppError('SERVICE_UNAVAILABLE', 'The database is busy; retry the request')
            : new AppError('INTERNAL', 'Internal error; the request id identifies it in the logs');
      if (!(e instanceof AppError)) options.logger.error({ err: e, requestId }, 'unhandled error');
      if (error.status === 503) res.setHeader('retry-after', '1');
      if (error.status === 401) res.setHeader('www-authenticate', 'Bearer');
      // Drop the rest of an oversized upload instead of reading it.
      if (error.status === 413) res.setHeader('connection', 'close');
      sendJson(res, error.status, errorBody(error, requestId), baseHeaders);
    }
  };
}
