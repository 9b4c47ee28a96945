// The spec's withdrawal paths (withdraw, auto-withdrawals), reads of withdrawals, and the sandbox's chain controls.
import type { Services } from '../core/feature.ts';
import { JsonText, jsonText } from '../core/json.ts';
import { route, type Route } from '../http/router.ts';
import { autoWithdrawalsPatchSchema, listAutoWithdrawals, presentAutoWithdrawals, updateAutoWithdrawals } from './auto.ts';
import { presentWithdrawal } from './presenter.ts';
import { withdrawRequestSchema } from './rules.ts';
import { confirmSandboxWithdrawal, rejectSandboxWithdrawal } from './sandbox.ts';
import { getWithdrawal, listWithdrawals, withdraw, withdrawalListSchema } from './service.ts';

// `amount` of an auto-withdrawal rule is a JSON number in the spec: written with its exact digits.
const autoWithdrawalsBody = (rules: Awaited<ReturnType<typeof listAutoWithdrawals>>) => new JsonText(jsonText(presentAutoWithdrawals(rules)));

export const withdrawalRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/transactions/withdraw',
    auth: 'required',
    body: withdrawRequestSchema,
    handler: async (req, ctx) => {
      const key = req.headers['idempotency-key'];
      const { results, replayed } = await withdraw(ctx.withdrawals, req.company!, req.body, typeof key === 'string' ? key : null);
      return { status: 200, body: results, headers: replayed ? { 'idempotent-replayed': 'true' } : undefined };
    },
  }),
  route({
    method: 'GET',
    path: '/api/transactions/withdrawals',
    auth: 'required',
    query: withdrawalListSchema,
    handler: async (req, ctx) => {
      const { withdrawals, nextCursor } = await listWithdrawals(ctx.withdrawals, req.company!, req.query);
      return { status: 200, body: { withdrawals: withdrawals.map(presentWithdrawal), nextCursor } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/transactions/withdrawals/:uid',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await getWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/auto-withdrawals',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: autoWithdrawalsBody(await listAutoWithdrawals(ctx.db, req.company!.id)) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/auto-withdrawals',
    auth: 'required',
    body: autoWithdrawalsPatchSchema,
    handler: async (req, ctx) => ({ status: 200, body: autoWithdrawalsBody(await updateAutoWithdrawals(ctx.withdrawals, req.company!.id, req.body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/withdrawals/:uid/confirm',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await confirmSandboxWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/sandbox/withdrawals/:uid/reject',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentWithdrawal(await rejectSandboxWithdrawal(ctx.withdrawals, req.company!, req.params['uid']!)) }),
  }),
];
