// Which route answered a request, as its template (`/api/invoices/v1/regular/:id`), for the HTTP metrics: never
// the raw path, whose ids would make a series each. Whoever matches a route names it; nothing named: `unmatched`.
import type { ServerResponse } from 'node:http';

const routes = new WeakMap<ServerResponse, string>();

export function labelRoute(res: ServerResponse, template: string): void {
  routes.set(res, template);
}

export function routeLabel(res: ServerResponse): string {
  return routes.get(res) ?? 'unmatched';
}
