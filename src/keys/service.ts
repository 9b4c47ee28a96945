// Restricted API keys (docs/security.md): made, listed and revoked by the merchant, per mode. A key's token is shown
// once; only its SHA-256 is kept (core/auth.ts finds a caller by it). Revoking is a credentials change: every
// instance drops its cached lookups and ends the key's live connections (core/auth.ts recordCredentialsChanged).
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ApiKey } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { recordCredentialsChanged } from '../core/auth.ts';
import { recordAudit } from '../core/audit.ts';
import { commitWithEvents, type EventDeps } from '../core/events.ts';
import { missingScopeMessage, SCOPES, type Access, type Actor, type Scope } from '../core/scopes.ts';
import { hashToken } from '../core/tokens.ts';
import { instant } from '../core/validation.ts';
import type { Clock } from '../clock.ts';
import type { Mode } from '../domain/modes.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';

export type KeyDeps = EventDeps & { clock: Clock };

/** Keys a tenant may hold that are not revoked (expired ones count until revoked): the list needs no pages. */
export const MAX_ACTIVE_KEYS = 100;
export const MAX_KEY_NAME_LENGTH = 100;

/** rk_<mode>_ + 256 random bits: the prefix tells a leaked string's kind and mode at a glance. */
export const newApiKeyToken = (mode: Mode): string => `rk_${mode}_${randomBytes(32).toString('base64url')}`;

export const scopeSchema = z.enum(SCOPES, { message: `must be one of: ${SCOPES.join(', ')}` });

export const createApiKeySchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(MAX_KEY_NAME_LENGTH),
  scopes: z
    .array(scopeSchema)
    .min(1, 'must name at least one scope')
    .max(SCOPES.length)
    .refine((s) => new Set(s).size === s.length, 'must not name a scope twice'),
  expiresAt: instant.nullish(),
});
export type CreateApiKeyInput = z.output<typeof createApiKeySchema>;

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    createdAt: z.string().meta({ format: 'date-time' }),
    expiresAt: z.string().meta({ format: 'date-time' }).nullable(),
    lastUsedAt: z.string().meta({ format: 'date-time' }).nullable().meta({ description: 'Last authenticated call, to the minute (written at most once a minute).' }),
  })
  .meta({ id: 'ApiKey' });
export const createdApiKeySchema = apiKeySchema
  .extend({ token: z.string().meta({ description: 'The key itself (`rk_test_…` / `rk_live_…`): shown only in this answer.' }) })
  .meta({ id: 'CreatedApiKey' });
export const apiKeyListSchema = z.object({ apiKeys: z.array(apiKeySchema) }).meta({ id: 'ApiKeyList' });

export interface ApiKeyView {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export const presentApiKey = (k: ApiKey): ApiKeyView => ({
  id: k.id,
  name: k.name,
  scopes: SCOPES.filter((s) => k.scopes.includes(s)),
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
});

/**
 * A new key with `input.scopes`, no more than the caller's own (a key cannot mint a stronger one). Expiry is real
 * time in both modes: it ends credentials, which no test clock may move.
 */
export async function createApiKey(deps: KeyDeps, company: Company, access: Access, input: CreateApiKeyInput): Promise<{ key: ApiKey; token: string }> {
  const beyond = input.scopes.find((s) => !access.scopes.has(s));
  if (beyond) throw new ForbiddenError(`${missingScopeMessage(beyond)}: a key cannot grant a scope it does not hold`);
  const now = deps.clock.real();
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) throw new ValidationError([{ path: 'expiresAt', message: 'must be in the future' }]);
  const token = newApiKeyToken(company.mode);
  const key = await commitWithEvents(deps, async (tx) => {
    // The tenant's row lock serialises key creation, so the limit holds under concurrent calls.
    await tx.$queryRaw`SELECT 1 FROM "Company" WHERE "id" = ${company.id}::uuid FOR UPDATE`;
    const active = await tx.apiKey.count({ where: { companyId: company.id, revokedAt: null } });
    if (active >= MAX_ACTIVE_KEYS) throw new ConflictError('CONFLICT', `A mode holds at most ${MAX_ACTIVE_KEYS} API keys that are not revoked: revoke one first`);
    const created = await tx.apiKey.create({
      data: { id: randomUUID(), companyId: company.id, name: input.name, scopes: input.scopes, tokenHash: hashToken(token), expiresAt: input.expiresAt ?? null },
    });
    await recordAudit(tx, company.id, access.actor, 'api_key.created', {
      apiKey: { id: created.id, name: created.name },
      scopes: SCOPES.filter((s) => created.scopes.includes(s)),
      expiresAt: created.expiresAt?.toISOString() ?? null,
    });
    return created;
  });
  return { key, token };
}

/** The tenant's keys that are not revoked, newest first (never their tokens). */
export function listApiKeys(deps: Pick<KeyDeps, 'db'>, companyId: string): Promise<ApiKey[]> {
  return deps.db.apiKey.findMany({ where: { companyId, revokedAt: null }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Revokes a key of the tenant at once: refused by every instance from the commit on, its live connections ended
 * within 2 s (the credentials-changed event). 404 for no such key, another tenant's, or one already revoked.
 */
export async function revokeApiKey(deps: KeyDeps, company: Company, actor: Actor, id: string): Promise<ApiKey> {
  if (!UUID.test(id)) throw new NotFoundError(`No API key with id ${id}`);
  return commitWithEvents(deps, async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE "ApiKey" SET "revokedAt" = now() WHERE "id" = ${id}::uuid AND "companyId" = ${company.id}::uuid AND "revokedAt" IS NULL RETURNING "id"`;
    if (rows.length === 0) throw new NotFoundError(`No API key with id ${id}`);
    await recordCredentialsChanged(tx, company.id, 'api_key_revoked');
    const key = await tx.apiKey.findUniqueOrThrow({ where: { id } });
    await recordAudit(tx, company.id, actor, 'api_key.revoked', { apiKey: { id: key.id, name: key.name } });
    return key;
  });
}
