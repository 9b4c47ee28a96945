import type { IncomingMessage } from 'node:http';
import type { Company } from '../companies/service.ts';

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (undefined when empty). */
  body: unknown;
  headers: IncomingMessage['headers'];
  /** The authenticated company, when the route's auth allowed or required one and a valid token came. */
  company: Company | null;
  requestId: string;
}

export interface RestResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type AuthMode = 'required' | 'optional' | 'none';

export interface Route<Ctx> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** e.g. `/api/invoices/v1/regular/:id/proceed` */
  path: string;
  auth: AuthMode;
  handler: (req: RestRequest, ctx: Ctx) => Promise<RestResponse>;
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
      const pattern = route.path.replace(/:([a-zA-Z]+)/g, (_, name: string) => {
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
