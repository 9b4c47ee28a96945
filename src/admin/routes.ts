// Operator API behind the merchant CLI: lets the CLI manage merchants while the server holds the database.
import type { CustodySource } from '../chains/custody.ts';
import type { Db } from '../db/client.ts';
import type { Route } from '../http/router.ts';
import { verifyLedger } from '../ledger/verify.ts';
import { companyIdSchema, createCompany, listCompanies, rotatePublicToken, rotateSecretKey, type CreateCompanyInput } from '../companies/service.ts';
import { parseInput } from '../core/validation.ts';
import type { TokenAuthenticator } from '../core/auth.ts';

export interface AdminContext {
  db: Db;
  auth: TokenAuthenticator;
  /** The real chain nodes, for ledger:verify's custody check. */
  custody: CustodySource[];
}

export const adminRoutes: Route<AdminContext>[] = [
  // 200 either way: the report says whether the ledger holds; the CLI turns `ok` into its exit code.
  { method: 'GET', path: '/admin/ledger/verify', auth: 'none', handler: async (_req, ctx) => ({ status: 200, body: await verifyLedger(ctx.db, ctx.custody) }) },
  { method: 'GET', path: '/admin/companies', auth: 'none', handler: async (_req, ctx) => ({ status: 200, body: await listCompanies(ctx.db) }) },
  {
    method: 'POST',
    path: '/admin/companies',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 201, body: await createCompany(ctx.db, (req.body ?? {}) as CreateCompanyInput) }),
  },
  {
    method: 'POST',
    path: '/admin/companies/:id/rotate-token',
    auth: 'none',
    handler: async (req, ctx) => {
      const out = await rotatePublicToken(ctx.db, parseInput(companyIdSchema, { companyId: req.params['id'] }));
      ctx.auth.invalidate();
      return { status: 200, body: out };
    },
  },
  {
    method: 'POST',
    path: '/admin/companies/:id/rotate-secret',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 200, body: await rotateSecretKey(ctx.db, parseInput(companyIdSchema, { companyId: req.params['id'] })) }),
  },
];
