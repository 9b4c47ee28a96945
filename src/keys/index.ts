// Restricted API keys with scopes (docs/security.md).
import type { Feature } from '../core/feature.ts';
import './graphql.ts';
import { keyRoutes } from './rest.ts';
import type { KeyDeps } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    keys: KeyDeps;
  }
}

export function keysFeature(): Feature {
  return {
    name: 'keys',
    services: (p) => ({ keys: { db: p.db, events: p.commits, clock: p.clock } }),
    routes: keyRoutes,
  };
}
