// The spec's withdrawal paths (withdraw, auto-withdrawals), reads of withdrawals, and the sandbox's chain controls.
import type { Services } from '../core/feature.ts';
import { idempotencyKeySchema } from '../core/idempotency.ts';
import { JsonText, jsonText } from '../core/json.ts';
import { route, type Route } from '../http/router.ts';
import { autoWithdrawalsPatchSchema, listAutoWithdrawals, presentAutoWithdrawals, updateAutoWithdrawals } from './auto.ts';
import { z } from 'zod';
import { autoWithdrawalsSchema, presentWithdrawal, withdrawalPageSchema, withdrawalSchema, withdrawResultSchema } from './presenter.ts';
import { withdrawRequestSchema } from './rules.ts';
import { confirmSandboxWithdrawal, rejectSandboxWithdrawal } from './sandbox.ts';
import { withdraw } from './hold.ts';
import { getWithdrawal, listWithdrawals, withdrawalListSchema } from './queries.ts';

// `amount` of an auto-withdrawal rule is a JSON number in the spec: written with its exact digits.
const uidParam = { uid: z.string().meta({ description: 'The withdrawal uid.', example: '0b9f5c1e-6a1d-4c44-9d4e-2f7c7a1c3b10' }) };
const sandboxDoc = (verb: 'confirm' | 'reject') => ({
  operationId: `${verb}SandboxWithdrawal`,
  summary: verb === 'confirm' ? 'Sandbox: the chain confirms a withdrawal' : 'Sandbox: the chain fails a withdrawal',
  description: `Test mode only (a live-mode token gets 403): reports the merchant's withdrawal as ${verb === 'confirm' ? 'confirmed on chain, so it becomes `done`' : 'failed on chain, so it becomes `rejected` and its money returns'}; 409 while it is not on chain yet.`,
  tag: 'Sandbox',
  params: uidParam,
  responses: { 200: { description: 'The withdrawal, now final.', schema: withdrawalSchema } },
  errors: [403, 404, 409],
});

const autoWithdrawalsBody = (rules: Awaited<ReturnType<typeof listAutoWithdrawals>>) => new JsonText(jsonText(presentAutoWithdrawals(rules)));

export const withdrawalRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/transactions/withdraw',
    auth: 'required',
    scope: 'payouts:write',
    body: withdrawRequestSchema,
    doc: {
      operationId: 'withdraw',
      summary: 'Execute one or many withdrawals',
      description:
        "One result per item, in request order. Each `amount` is net (the receiver gets it); the asset's network fee is charged on top. A refused item (below the minimum, a bad address, a missing TON tag, or a balance that does not cover every item of its asset: all or nothing per asset) is `success: false` with a message and an empty uid. A malformed request (no items, more than 100, a bad amount) is one 422 (docs/withdrawals.md).",
      tag: 'Withdrawals',
      headers: {
        'Idempotency-Key': {
          description: 'The same key with the same body answers the first results again (`Idempotent-Replayed: true`) and creates nothing; with another body it is a 409.',
          schema: idempotencyKeySchema,
        },
      },
      requestExample: { items: [{ amount: 12.25, tag: '', to: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', asset: 'trc20usdt' }] },
      responses: {
        200: {
          description: 'The outcome of every item (a replay of the same `Idempotency-Key` carries `Idempotent-Replayed: true`).',
          schema: z.array(withdrawResultSchema),
          headers: { 'Idempotent-Replayed': '`true` when this answers an earlier request with the same `Idempotency-Key`' },
        },
      },
      errors: [409],
    },
    handler: async (req, ctx) => {
      const key = req.headers['idempotency-key'];
      const { results, replayed } = await withdraw(ctx.withdrawals, req.company!, req.access!.actor, req.body, typeof key === 'string' ? key : null);
      return { status: 200, body: results, headers: replayed ? { 'idempotent-replayed': 'true' } : undefined };
    },
  }),
  route({
    method: 'GET',
    path: '/api/transactions/withdrawals',
    auth: 'required',
    scope: 'payouts:read',
    query: withdrawalListSchema,
    doc: {
      operationId: 'listWithdrawals',
      summary: 'List withdrawals',
      description: 'Newest first, a page at a time (`after`: the last uid of the previous page).',
      tag: 'Withdrawals',
      responses: { 200: { description: 'A page of withdrawals.', schema: withdrawalPageSchema } },
    },
    handler: async (req, ctx) => {
      const { withdrawals, nextCursor } = await listWithdrawals(ctx.withdrawals, req.company!, req.query);
      return { status: 200, body: { withdrawals: withdrawals.map(presentWithdrawal), nextCursor } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/transactions/withdrawals/:uid',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'getWithdrawal',
      summary: 'Read a withdrawal',
      tag: 'Withdrawals',
      params: uidParam,
      responses: { 200: { description: 'The withdrawal.', schema: withdrawalSchema } },
      errors: [404],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await getWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/auto-withdrawals',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'listAutoWithdrawals',
      summary: 'List auto-withdrawal settings',
      description: 'One entry per payment currency; one never set is disabled with threshold 0 and no address.',
      tag: 'Withdrawals',
      responses: { 200: { description: 'Every rule.', schema: autoWithdrawalsSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: autoWithdrawalsBody(await listAutoWithdrawals(ctx.db, req.company!.id)) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/auto-withdrawals',
    auth: 'required',
    scope: 'payouts:write',
    body: autoWithdrawalsPatchSchema,
    doc: {
      operationId: 'updateAutoWithdrawals',
      summary: 'Set auto-withdrawal rules',
      description:
        'Changes only the assets named (payment currency ids), all or nothing. An enabled rule needs a valid address and a threshold of at least the minimum withdrawal plus its fee; `withdrawalTag` is required for TON and null (or empty) otherwise. Answers the whole list.',
      tag: 'Withdrawals',
      requestExample: { assets: { ton: { amount: 25, isEnabled: true, withdrawalTag: 'merchant-42', withdrawalAddress: 'EQD4FPq-PRDieyQKkizFTRtSDyucUIqrj0v_zXJmqaDp6_0t' } } },
      responses: { 200: { description: 'Every rule, after the change.', schema: autoWithdrawalsSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: autoWithdrawalsBody(await updateAutoWithdrawals(ctx.withdrawals, req.company!, req.access!.actor, req.body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/withdrawals/:uid/confirm',
    auth: 'required',
    testModeOnly: true,
    scope: 'payouts:write',
    doc: sandboxDoc('confirm'),
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await confirmSandboxWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/withdrawals/:uid/reject',
    auth: 'required',
    testModeOnly: true,
    scope: 'payouts:write',
    doc: sandboxDoc('reject'),
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await rejectSandboxWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
];
