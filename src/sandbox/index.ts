// The sandbox: simulated transfers and each merchant's test clock (404 everywhere when SANDBOX=0).
import type { SandboxRegistry } from '../chains/sandbox.ts';
import type { Feature } from '../core/feature.ts';
import './graphql.ts';
import { sandboxRoutes } from './rest.ts';
import type { SandboxDeps } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    sandbox: SandboxDeps;
  }
}

export function sandboxFeature(): Feature {
  return {
    name: 'sandbox',
    services: (p, s) => ({ sandbox: { ...s.invoices, sandbox: p.config.sandbox ? (p.chains as SandboxRegistry) : null, payments: s.payments } }),
    routes: sandboxRoutes,
  };
}
