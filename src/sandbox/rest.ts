import type { Route } from '../http/router.ts';
import {
  advanceSandboxClock,
  confirmSandboxTransfer,
  createSandboxTransfer,
  dropSandboxTransfer,
  presentSandboxTransfer,
  readSandboxClock,
  type SandboxDeps,
} from './service.ts';

export interface SandboxRestContext {
  sandbox: SandboxDeps;
}

export const sandboxRoutes: Route<SandboxRestContext>[] = [
  {
    method: 'POST',
    path: '/api/sandbox/transfers',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 201, body: presentSandboxTransfer(await createSandboxTransfer(ctx.sandbox, req.company!, req.body)) }),
  },
  {
    method: 'POST',
    path: '/api/sandbox/transfers/:id/confirm',
    auth: 'required',
    handler: async (req, ctx) => ({
      status: 200,
      body: presentSandboxTransfer(await confirmSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!, req.body)),
    }),
  },
  {
    method: 'POST',
    path: '/api/sandbox/transfers/:id/drop',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentSandboxTransfer(await dropSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!)) }),
  },
  {
    method: 'POST',
    path: '/api/sandbox/clock/advance',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await advanceSandboxClock(ctx.sandbox, req.company!, req.body) }),
  },
  { method: 'GET', path: '/api/sandbox/clock', auth: 'required', handler: async (req, ctx) => ({ status: 200, body: await readSandboxClock(ctx.sandbox, req.company!) }) },
];
