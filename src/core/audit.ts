// The audit log's writer (docs/security.md, "Audit log"): every security- or money-relevant change records who made
// it (the API key's id and name, never a token), from which client address and what changed, in the transaction of
// the change itself, so a change is never without its entry nor an entry without its change. The table refuses
// UPDATE, DELETE and TRUNCATE (a trigger); the reader is the audit feature (src/audit/).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Actor } from './scopes.ts';

export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'public_token.rotated',
  'secret_key.rotated',
  'payout_policy.changed',
  'payout_address.added',
  'payout_address.removed',
  'webhook_url.changed',
  'auto_withdrawals.changed',
  'autoswaps.changed',
  'withdrawal.requested',
  'invoice.refunded',
  'invoice.accepted',
  'store_settings.changed',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

type Tx = Pick<Prisma.TransactionClient, 'auditEntry'>;

export async function recordAudit(tx: Tx, companyId: string, actor: Actor, action: AuditAction, details: Prisma.InputJsonObject): Promise<void> {
  await tx.auditEntry.create({
    data: {
      id: randomUUID(),
      companyId,
      action,
      credential: actor.credential,
      keyId: actor.key?.id ?? null,
      keyName: actor.key?.name ?? null,
      clientAddress: actor.address,
      details,
    },
  });
}
