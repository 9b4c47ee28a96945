// Operator API behind the merchant CLI: lets the CLI manage merchants while the server holds the database.
import type { CustodySource } from '../chains/custody.ts';
import type { Db } from '../db/client.ts';
import { route, type Route } from '../http/router.ts';
import { z } from 'zod';
import { instant } from '../core/validation.ts';
import { balancesBefore, companyOfEntry, readEntryPage } from '../ledger/entries.ts';
import type { Declared } from '../core/feature.ts';
import { verifyLedger } from '../ledger/verify.ts';
import { companyModeSchema, createCompany, listCompanies, rotatePublicToken, rotateSecretKey, type CreateCompanyInput } from '../companies/service.ts';
import { parseInput } from '../core/validation.ts';
import { MODES } from '../domain/modes.ts';
import type { TokenAuthenticator } from '../core/auth.ts';
import type { CommitSignal } from '../core/events.ts';

export interface AdminContext {
  db: Db;
  auth: TokenAuthenticator;
  /** This process's bus, told when a change committed events. */
  events: CommitSignal;
  /** The real chain nodes, for ledger:verify's custody check. */
  custody: CustodySource[];
  /** The features' ledger checks and accounts (the server's Platform.declared). */
  declared: Pick<Declared, 'ledgerChecks' | 'ledgerAccounts'>;
}

// The entry reads of ledger:verify --export (src/ledger/verify-export.ts), for a CLI on the server's embedded database.
const entryPageQuery = z.object({
  companyId: z.uuid(),
  from: instant,
  to: instant,
  afterCreatedAt: instant.optional(),
  afterId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(10_000),
});
const balancesQuery = z.object({ companyId: z.uuid(), at: instant });

/** The mode a rotation is for: `{"mode": "test" | "live"}` in the body. */
const modeOf = (body: unknown): unknown => (body as { mode?: unknown } | undefined)?.mode;

export const adminRoutes: Route<AdminContext>[] = [
  route({
    method: 'GET',
    path: '/admin/ledger/entries',
    auth: 'none',
    query: entryPageQuery,
    handler: async ({ query: q }, ctx) => {
      const after = q.afterCreatedAt && q.afterId ? { createdAt: q.afterCreatedAt, id: q.afterId } : null;
      return { status: 200, body: await readEntryPage(ctx.db, q.companyId, { from: q.from, to: q.to }, after, q.limit) };
    },
  }),
  route({
    method: 'GET',
    path: '/admin/ledger/balances-before',
    auth: 'none',
    query: balancesQuery,
    handler: async ({ query: q }, ctx) => ({ status: 200, body: Object.fromEntries(await balancesBefore(ctx.db, q.companyId, q.at)) }),
  }),
  route({
    method: 'GET',
    path: '/admin/ledger/entries/:id/company',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 200, body: { companyId: await companyOfEntry(ctx.db, req.params['id']!) } }),
  }),
  // 200 either way: the report says whether the ledger holds; the CLI turns `ok` into its exit code.
  route({
    method: 'GET',
    path: '/admin/ledger/verify',
    auth: 'none',
    query: z.object({ mode: z.enum(MODES).optional() }),
    handler: async (req, ctx) => ({ status: 200, body: await verifyLedger(ctx.db, ctx.custody, { mode: req.query.mode ?? null, checks: ctx.declared.ledgerChecks, accounts: ctx.declared.ledgerAccounts }) }),
  }),
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
      const ref = parseInput(companyModeSchema, { companyId: req.params['id'], mode: modeOf(req.body) });
      const out = await rotatePublicToken(ctx.db, ref, ctx.events);
      // This process's cache at once, before the answer; the others (and this one's live connections) by the bus.
      ctx.auth.forget(ref.companyId);
      return { status: 200, body: out };
    },
  },
  {
    method: 'POST',
    path: '/admin/companies/:id/rotate-secret',
    auth: 'none',
    handler: async (req, ctx) => ({ status: 200, body: await rotateSecretKey(ctx.db, parseInput(companyModeSchema, { companyId: req.params['id'], mode: modeOf(req.body) })) }),
  },
];
