// GraphQL for API keys: apiKeys, createApiKey, revokeApiKey; the same service as REST (docs/security.md).
import type { ApiKey } from '../../generated/prisma/client.ts';
import { SCOPES, type Scope } from '../core/scopes.ts';
import { parseInput } from '../core/validation.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { specEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, nodeIdInput, registerNodeType } from '../graphql/node-ids.ts';
import { createApiKey, createApiKeySchema, listApiKeys, revokeApiKey } from './service.ts';

registerNodeType('ApiKey', nodeIdFormats.uuid);

const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'invoices:read': 'Read invoices (and the invoice events subscription) and payment links.',
  'invoices:write': 'Create invoices and payment links, deactivate links, proceed on the client’s behalf, accept; the sandbox’s transfers and clock.',
  'payouts:read': 'Read balances, withdrawals, auto-withdrawal rules, the payout policy and address book.',
  'payouts:write': 'Withdraw, refund, change auto-withdrawal rules, the payout policy and the address book.',
  'deposits:read': 'Read static addresses and deposits.',
  'deposits:write': 'Create static addresses.',
  'settings:read': 'Read the store settings, webhook URL, deliveries, events, underpayment limits, API keys and the audit log.',
  'settings:write': 'Change the store settings, webhook URL, underpayment limits; redeliver webhooks.',
  'exports:read': 'Download ledger and invoice exports.',
  'keys:write': 'Create and revoke API keys (never with a scope the caller lacks).',
};

export const ApiScopeEnum = specEnum('ApiScope', SCOPES, 'What an API key may do (docs/security.md); the merchant’s public token holds every scope.', (s) => SCOPE_DESCRIPTIONS[s]);

export const ApiKeyType = builder.prismaNode('ApiKey', {
  description: 'A restricted API key of the calling mode; its token is shown only when it is made.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'settings:read'), revokedAt: null }),
  nullable: true,
  fields: (t) => ({
    name: t.exposeString('name', { description: 'What the merchant called it.' }),
    scopes: t.field({ type: [ApiScopeEnum], description: 'What it may do.', resolve: (k) => SCOPES.filter((s) => k.scopes.includes(s)) }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When it stops working by itself; null: never.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'Its last authenticated call, to the minute; null: never used.' }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.prismaField({
    type: [ApiKeyType],
    authScopes: { scope: 'settings:read' },
    description: 'The API keys of this mode that are not revoked, newest first (at most 100 exist at once, so no pages).',
    resolve: async (_query, _root, _args, ctx) => listApiKeys(ctx.keys, ctx.company!.id),
  }),
);

interface CreatedKey {
  apiKey: ApiKey;
  token: string;
}

const CreatedApiKeyType = builder.objectRef<CreatedKey>('CreatedApiKey').implement({
  description: 'A new key and its token: the only time the token is shown.',
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyType, nullable: false, description: 'The key.', resolve: (c) => c.apiKey }),
    token: t.exposeString('token', { description: 'The key itself (`rk_test_…`/`rk_live_…`): send it as `Authorization: Bearer <token>`. Store it now.' }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  description: 'A new key: its name, scopes and optional expiry.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'What it is for (1 to 100 characters).' }),
    scopes: t.field({ type: [ApiScopeEnum], required: true, description: 'What it may do: at least one, none the caller lacks.' }),
    expiresAt: t.field({ type: 'DateTime', required: false, description: 'When it stops working by itself (in the future); none: never.' }),
  }),
});

builder.mutationField('createApiKey', (t) =>
  t.field({
    type: CreatedApiKeyType,
    authScopes: { scope: 'keys:write' },
    description: 'Makes a restricted API key of the calling mode (REST POST /api/company/api-keys).',
    errors: mutationOutcome('created', 'The key and its token.', [ValidationError, ForbiddenError, ConflictError]),
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key to make.' }) },
    resolve: async (_root, { input }, ctx) => {
      const { key, token } = await createApiKey(ctx.keys, ctx.company!, ctx.access!, parseInput(createApiKeySchema, { ...input, expiresAt: input.expiresAt?.toISOString() ?? null }));
      return { apiKey: key, token };
    },
  }),
);

const RevokeApiKeyInput = builder.inputType('RevokeApiKeyInput', {
  description: 'The key to revoke.',
  fields: (t) => ({ id: t.id({ required: true, description: 'The ApiKey id.' }) }),
});

builder.mutationField('revokeApiKey', (t) =>
  t.prismaField({
    type: 'ApiKey',
    authScopes: { scope: 'keys:write' },
    description: 'Revokes a key at once on every instance; its live connections end within 2 s (REST DELETE /api/company/api-keys/{id}).',
    errors: mutationOutcome('apiKey', 'The revoked key.', [NotFoundError]),
    args: { input: t.arg({ type: RevokeApiKeyInput, required: true, description: 'Which key.' }) },
    resolve: async (_query, _root, { input }, ctx) => revokeApiKey(ctx.keys, ctx.company!, ctx.access!.actor, nodeIdInput(input.id, 'ApiKey', 'id')),
  }),
);

builder.queryField('viewerScopes', (t) =>
  t.field({
    type: [ApiScopeEnum],
    authScopes: { merchant: true },
    description: 'What the calling credential may do: every scope for the public token, a key’s own, a dashboard session’s of what it signed in with.',
    resolve: (_root, _args, ctx) => SCOPES.filter((s) => ctx.access!.scopes.has(s)),
  }),
);
