// Merchant settings and money: underpayment limits and balances.
import type { Db } from '../db/client.ts';
import type { Route } from '../http/router.ts';
import { companyBalances } from '../ledger/balances.ts';
import { getUnderpaymentLimits, setUnderpaymentLimits } from '../payments/underpayment.ts';

export interface CompanyRestContext {
  db: Db;
}

export const companyRoutes: Route<CompanyRestContext>[] = [
  {
    method: 'GET',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: { limits: await getUnderpaymentLimits(ctx.db, req.company!.id) } }),
  },
  {
    method: 'PATCH',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: { limits: await setUnderpaymentLimits(ctx.db, req.company!.id, req.body) } }),
  },
  {
    method: 'GET',
    path: '/api/company/balances',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: { balances: await companyBalances(ctx.db, req.company!.id) } }),
  },
];
