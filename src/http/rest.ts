import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Company } from '../core/auth.ts';
import { requireTestMode } from '../core/tenants.ts';
import type { Authenticated } from '../core/auth.ts';
import { requireScope } from '../core/scopes.ts';
import { parseInput } from '../core/validation.ts';
import { AppError, UnauthenticatedError, ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';
import { clientError, errorHeaders } from './edge.ts';
import { findInputProblem } from './input-guard.ts';
import { errorBody, parseJsonBody, readBody, sendJson, sendStream } from './io.ts';
import { labelRoute } from './route-label.ts';
import type { Router } from './router.ts';

export interface RestOptions {
  bodyLimitBytes: number;
  /** The caller from the request's credentials: null without any, 401 with a bad one (429 after too many). */
  session: (req: IncomingMessage) => Promise<Authenticated | null>;
  /** The client's address (behind trusted proxies, the one they saw), for the audit log. */
  clientAddress: (req: IncomingMessage) => string;
  logger: Logger;
  /** Extra headers on every answer (e.g. CORS for the public API). */
  headers?: Record<string, string>;
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
      labelRoute(res, route.path);
      // Who is asking first: an anonymous caller of a merchant route is told 401 whatever else is wrong.
      const found = route.auth === 'none' ? null : await options.session(req);
      const company = found?.company ?? null;
      if (route.auth === 'required' && !company) throw new UnauthenticatedError();
      // What the credential may do, before anything else is looked at (docs/security.md).
      if (found && route.scope) requireScope(found, route.scope);
      // Which mode's data the answer is about (docs/modes.md).
      if (company) res.setHeader('payrail-mode', company.mode);
      if (route.testModeOnly && company) requireTestMode(company);
      const query = Object.fromEntries(url.searchParams);
      const badParam = findInputProblem(params) ?? findInputProblem(query);
      if (badParam) throw new ValidationError([badParam]);
      const raw = method === 'GET' ? Buffer.alloc(0) : await readBody(req, options.bodyLimitBytes);
      const body = parseJsonBody(req, raw);
      const badBody = findInputProblem(body);
      if (badBody) throw new ValidationError([badBody]);
      const out = await route.handler(
        {
          params,
          query: route.query ? parseInput(route.query, query) : url.searchParams,
          body: route.body ? parseInput(route.body, body) : body,
          headers: req.headers,
          company,
          access: found && {
            scopes: found.scopes,
            actor: { credential: found.credential.kind, key: found.key, address: options.clientAddress(req) },
          },
          requestId,
        },
        ctx,
      );
      if (out.stream) {
        await sendStream(res, out.status, { ...baseHeaders, ...out.headers }, out.stream, (err, clientGone) =>
          clientGone
            ? options.logger.debug({ err, requestId }, 'streamed answer stopped: the client went away')
            : options.logger.error({ err, requestId }, 'streamed answer failed after its first byte: connection cut'),
        );
      } else sendJson(res, out.status, out.body, { ...baseHeaders, ...out.headers });
    } catch (e) {
      const error = clientError(e, (err) => options.logger.error({ err, requestId }, 'unhandled error'));
      sendJson(res, error.status, errorBody(error, requestId), { ...baseHeaders, ...errorHeaders(error) });
    }
  };
}
