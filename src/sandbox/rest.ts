import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import {
  advanceClockSchema,
  advanceSandboxClock,
  confirmSandboxSchema,
  confirmSandboxTransfer,
  createSandboxTransfer,
  dropSandboxTransfer,
  presentSandboxTransfer,
  readSandboxClock,
  sandboxTransferSchema,
} from './service.ts';

export const sandboxRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/sandbox/transfers',
    auth: 'required',
    body: sandboxTransferSchema,
    handler: async (req, ctx) => ({ status: 201, body: presentSandboxTransfer(await createSandboxTransfer(ctx.sandbox, req.company!, req.body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/transfers/:id/confirm',
    auth: 'required',
    body: confirmSandboxSchema,
    handler: async (req, ctx) => ({
      status: 200,
      body: presentSandboxTransfer(await confirmSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!, req.body)),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/transfers/:id/drop',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentSandboxTransfer(await dropSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/clock/advance',
    auth: 'required',
    body: advanceClockSchema,
    handler: async (req, ctx) => ({ status: 200, body: await advanceSandboxClock(ctx.sandbox, req.company!, req.body) }),
  }),
  route({ method: 'GET', path: '/api/sandbox/clock', auth: 'required', handler: async (req, ctx) => ({ status: 200, body: await readSandboxClock(ctx.sandbox, req.company!) }) }),
];
