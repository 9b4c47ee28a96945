import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { Company } from '../core/auth.ts';
import type { Services } from '../core/feature.ts';
import type { Access, Scope } from '../core/scopes.ts';

export interface RestRequest<Body = unknown, Query = URLSearchParams> {
  params: Record<string, string>;
  /** The query string, or what the route's `query` schema made of it. */
  query: Query;
  /** The JSON body (undefined when empty), or what the route's `body` schema made of it. */
  body: Body;
  headers: IncomingMessage['headers'];
  /** The authenticated company, when the route's auth allowed or required one and a valid token came. */
  company: Company | null;
  /** With `company`: the caller's scopes and who it is (the key, the client address) for the audit log. */
  access: Access | null;
  requestId: string;
}

export interface RestResponse {
  status: number;
  /** The JSON body; ignored when `stream` is given. */
  body?: unknown;
  /**
   * A body written chunk by chunk as it is produced (a CSV export), with backpressure: the next chunk is asked for
   * once the client took the last one, and not at all once it went away. `headers` name its type. A failure before
   * the first chunk is an ordinary error answer; after it, the connection is cut (io.ts sendStream).
   */
  stream?: AsyncIterable<string>;
  headers?: Record<string, string>;
}

export type AuthMode = 'required' | 'optional' | 'none';

/** One answer of a route as the OpenAPI document shows it: JSON (its zod schema) unless `contentType` says otherwise. */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  /** e.g. `text/csv; charset=utf-8` for a streamed file (then `schema` describes nothing). */
  contentType?: string;
  example?: unknown;
  /** Response headers worth naming (e.g. `Idempotent-Replayed`). */
  headers?: Record<string, string>;
}

/**
 * How a public route appears in the OpenAPI document (`GET /api/openapi.json`, docs/openapi.md). Every route of the
 * public API has one: the document is built from these and the route's own body and query schemas, so it cannot drift.
 */
export interface RouteDoc {
  /** A unique camelCase name (`createInvoice`): what generated clients call the operation. Derived from method and path when absent. */
  operationId?: string;
  /** One line: what the operation does. */
  summary: string;
  description?: string;
  /** The group on the reference page: 'Invoices', 'Withdrawals', 'Webhooks', ... */
  tag: string;
  /** Schemas of the path parameters, by name: one for every `:name` of the path. */
  params?: Record<string, z.ZodType>;
  /** Request headers the route reads besides Authorization (e.g. `Idempotency-Key`): what they mean, or that and their schema. */
  headers?: Record<string, string | HeaderDoc>;
  /** A request body as a merchant would send it (from the spec where it has one). */
  requestExample?: unknown;
  /** The success answers, by status. */
  responses: Record<number, ResponseDoc>;
  /** A route without a token whose answer still names a mode in `Payrail-Mode` (the public invoice read). */
  modeHeader?: boolean;
  /**
   * Error statuses this route answers besides those every route may: 422, 500 and 503; 401 where a token is read;
   * 400, 413 and 415 where a body is read (every method but GET).
   */
  errors?: number[];
}

export interface HeaderDoc {
  description: string;
  schema: z.ZodType;
  required?: boolean;
}

export interface Route<Ctx> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** e.g. `/api/invoices/v1/regular/:id/proceed` */
  path: string;
  auth: AuthMode;
  /**
   * A sandbox tool (docs/modes.md): a live-mode token is refused with 403 before anything else of the request (path,
   * query, body) is read, so a live caller learns nothing of the route beyond that it takes a test-mode token.
   */
  testModeOnly?: boolean;
  /**
   * The scope an authenticated caller needs (docs/security.md): 403 FORBIDDEN naming it otherwise. Every route that
   * reads a token names one (a test checks); where the token is optional, a caller without one is not asked.
   */
  scope?: Scope;
  /** Validates the JSON body at the edge; the handler gets the typed result (422 listing every problem otherwise). */
  body?: z.ZodType;
  /** Validates the query parameters (an object of strings) likewise. */
  query?: z.ZodType;
  /** Its place in the OpenAPI document (required of public API routes; a contract test checks). */
  doc?: RouteDoc;
  handler: (req: RestRequest<any, any>, ctx: Ctx) => Promise<RestResponse>;
}

/** A route whose handler sees its body and query as its schemas typed them. */
export function route<Ctx, B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  r: Omit<Route<Ctx>, 'handler' | 'body' | 'query'> & {
    body?: B;
    query?: Q;
    handler: (
      req: RestRequest<B extends z.ZodType ? z.output<B> : unknown, Q extends z.ZodType ? z.output<Q> : URLSearchParams>,
      ctx: Ctx,
    ) => Promise<RestResponse>;
  },
): Route<Ctx> {
  return r as Route<Ctx>;
}

interface CompiledRoute<Ctx> extends Route<Ctx> {
  regex: RegExp;
  names: string[];
}

export type RouteMatch<Ctx> =
  | { kind: 'found'; route: Route<Ctx>; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

export class Router<Ctx> {
  private readonly routes: CompiledRoute<Ctx>[] = [];

  add(...routes: Route<Ctx>[]): this {
    for (const route of routes) {
      const names: string[] = [];
      // Literal parts match literally (`/api/openapi.json` is not `/api/openapiXjson`).
      const pattern = route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([a-zA-Z]+)/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      this.routes.push({ ...route, regex: new RegExp(`^${pattern}/?$`), names });
    }
    return this;
  }

  match(method: string, pathname: string): RouteMatch<Ctx> {
    const allow: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(pathname);
      if (!m) continue;
      if (route.method !== method) {
        allow.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1] ?? '');
      });
      return { kind: 'found', route, params };
    }
    return allow.length ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

declare module '../core/feature.ts' {
  interface Feature {
    /** Its REST routes (the GraphQL types register when the feature's module is imported). */
    routes?: Route<Services>[];
  }
}
