// GET /api/company/audit-log (docs/security.md, "Audit log").
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { auditPageSchema, auditQuerySchema, listAudit } from './service.ts';

export const auditRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/company/audit-log',
    auth: 'required',
    scope: 'settings:read',
    query: auditQuerySchema,
    doc: {
      operationId: 'listAuditLog',
      summary: 'Read the audit log',
      description:
        'Security- and money-relevant changes of this mode, newest first: keys made and revoked, rotations, payout policy and address book, webhook URL, auto-withdrawal rules, withdrawals requested, refunds, accepts; each with the key (id and name, never a token) and the client address. Append-only: no API changes or deletes an entry.',
      tag: 'Keys',
      responses: { 200: { description: 'A page of entries.', schema: auditPageSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await listAudit(ctx.db, req.company!.id, req.query) }),
  }),
];
