// Reading the audit log (the writer is core/audit.ts): newest first, in pages keyed by the entry's place in the log.
import { z } from 'zod';
import type { AuditEntry, Prisma } from '../../generated/prisma/client.ts';
import { AUDIT_ACTIONS } from '../core/audit.ts';
import { sequenceCursor } from '../core/validation.ts';
import type { Db } from '../db/client.ts';
import { isoInstant, nextCursor } from '../http/schemas.ts';

export const auditQuerySchema = z.object({
  after: sequenceCursor.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const CREDENTIAL_KINDS = ['public-token', 'api-key', 'session', 'operator'] as const;

export const auditEntrySchema = z
  .strictObject({
    id: z.uuid(),
    createdAt: isoInstant,
    action: z.enum(AUDIT_ACTIONS),
    credential: z.enum(CREDENTIAL_KINDS).meta({ description: 'What authenticated the change: the public token, an API key, a dashboard session (of either), or the operator (CLI).' }),
    apiKey: z.strictObject({ id: z.uuid(), name: z.string() }).nullable().meta({ description: 'The API key that made the change (never its token); null for the public token and the operator.' }),
    clientAddress: z.string().nullable().meta({ description: 'The client address (behind trusted proxies, the one they saw); null for the operator.' }),
    details: z.record(z.string(), z.unknown()).meta({ description: 'What changed; its fields depend on the action (docs/security.md).' }),
  })
  .meta({ id: 'AuditEntry' });

export const auditPageSchema = z.strictObject({ entries: z.array(auditEntrySchema).meta({ description: 'Newest first.' }), nextCursor }).meta({ id: 'AuditLog' });

export const presentAuditEntry = (e: AuditEntry) => ({
  id: e.id,
  createdAt: e.createdAt.toISOString(),
  action: e.action,
  credential: e.credential,
  apiKey: e.keyId ? { id: e.keyId, name: e.keyName ?? '' } : null,
  clientAddress: e.clientAddress,
  details: e.details as Record<string, unknown>,
});

export const auditWhere = (companyId: string): Prisma.AuditEntryWhereInput => ({ companyId });
export const auditOrder = [{ seq: 'desc' }] satisfies Prisma.AuditEntryOrderByWithRelationInput[];

/** A page, newest first; `after` is the `nextCursor` of the previous page (entries older than it follow). */
export async function listAudit(db: Db, companyId: string, q: z.output<typeof auditQuerySchema>) {
  const rows = await db.auditEntry.findMany({
    where: { ...auditWhere(companyId), ...(q.after !== undefined ? { seq: { lt: q.after } } : {}) },
    orderBy: auditOrder,
    take: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  return { entries: page.map(presentAuditEntry), nextCursor: rows.length > q.limit ? page.at(-1)!.seq.toString() : null };
}
