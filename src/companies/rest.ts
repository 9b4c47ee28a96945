// Merchant settings and money: underpayment limits and balances.
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { getUnderpaymentLimits, setUnderpaymentLimits, underpaymentLimitsSchema } from '../invoices/underpayment.ts';
import { companyBalances } from '../ledger/balances.ts';

export const companyRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: { limits: await getUnderpaymentLimits(ctx.db, req.company!.id) } }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    body: underpaymentLimitsSchema,
    handler: async (req, ctx) => ({ status: 200, body: { limits: await setUnderpaymentLimits(ctx.db, req.company!.id, req.body) } }),
  }),
  route({
    method: 'GET',
    path: '/api/company/balances',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: { balances: await companyBalances(ctx.db, req.company!.id) } }),
  }),
];
