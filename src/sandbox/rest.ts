import type { Services } from '../core/feature.ts';
import { z } from 'zod';
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
  sandboxClockAdvanceSchema,
  sandboxClockSchema,
  sandboxTransferAnswerSchema,
  sandboxTransferSchema,
} from './service.ts';

const TAG = 'Sandbox';
const SANDBOX_ONLY = 'Test mode only: a live-mode token gets 403 (docs/modes.md).';
const transferParams = { id: z.string().meta({ description: 'The sandbox transfer id.' }) };
const transferAnswer = (description: string) => ({ description, schema: sandboxTransferAnswerSchema });

export const sandboxRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/sandbox/transfers',
    auth: 'required',
    testModeOnly: true,
    scope: 'invoices:write',
    body: sandboxTransferSchema,
    doc: {
      operationId: 'createSandboxTransfer',
      summary: 'Sandbox: send a simulated payment',
      description: `${SANDBOX_ONLY} A transfer to an invoice's payment address (\`invoiceId\`, once the invoice is filled) or to one of the merchant's addresses (\`address\`, e.g. a static deposit address): exactly one of them. With \`confirmations\` at the network's requirement it is final at once.`,
      tag: TAG,
      requestExample: { invoiceId: '7Qx3hHq1bXo9b3kQmZzJ2f', amount: '8.2', confirmations: 19 },
      responses: { 201: transferAnswer('The transfer as the chain reported it.') },
      errors: [403, 404, 409],
    },
    handler: async (req, ctx) => ({ status: 201, body: presentSandboxTransfer(await createSandboxTransfer(ctx.sandbox, req.company!, req.body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/transfers/:id/confirm',
    auth: 'required',
    testModeOnly: true,
    scope: 'invoices:write',
    body: confirmSandboxSchema,
    doc: {
      operationId: 'confirmSandboxTransfer',
      summary: 'Sandbox: confirm a simulated payment',
      description: `${SANDBOX_ONLY} Raises its confirmations (by default to the network's requirement, making it final); 409 for a dropped transfer.`,
      tag: TAG,
      params: transferParams,
      requestExample: { confirmations: 19 },
      responses: { 200: transferAnswer('The transfer, confirmed.') },
      errors: [403, 404, 409],
    },
    handler: async (req, ctx) => ({
      status: 200,
      body: presentSandboxTransfer(await confirmSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!, req.body)),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/transfers/:id/drop',
    auth: 'required',
    testModeOnly: true,
    scope: 'invoices:write',
    doc: {
      operationId: 'dropSandboxTransfer',
      summary: 'Sandbox: drop a simulated payment from the chain',
      description: `${SANDBOX_ONLY} As a reorganisation would; 409 for a final transfer.`,
      tag: TAG,
      params: transferParams,
      responses: { 200: transferAnswer('The transfer, dropped.') },
      errors: [403, 404, 409],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentSandboxTransfer(await dropSandboxTransfer(ctx.sandbox, req.company!, req.params['id']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/clock/advance',
    auth: 'required',
    testModeOnly: true,
    scope: 'invoices:write',
    body: advanceClockSchema,
    doc: {
      operationId: 'advanceSandboxClock',
      summary: "Sandbox: move the merchant's test clock forward",
      description: `${SANDBOX_ONLY} Then runs the expiry of that merchant's invoices at once; other merchants are untouched.`,
      tag: TAG,
      requestExample: { minutes: 31 },
      responses: { 200: { description: 'The clock after the move.', schema: sandboxClockAdvanceSchema } },
      errors: [403, 404],
    },
    handler: async (req, ctx) => ({ status: 200, body: await advanceSandboxClock(ctx.sandbox, req.company!, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/sandbox/clock',
    auth: 'required',
    testModeOnly: true,
    scope: 'invoices:read',
    doc: {
      operationId: 'getSandboxClock',
      summary: "Sandbox: read the merchant's test clock",
      description: SANDBOX_ONLY,
      tag: TAG,
      responses: { 200: { description: 'The clock.', schema: sandboxClockSchema } },
      errors: [403, 404],
    },
    handler: async (req, ctx) => ({ status: 200, body: await readSandboxClock(ctx.sandbox, req.company!) }),
  }),
];
