// REST for API keys: POST/GET /api/company/api-keys, DELETE /api/company/api-keys/{id} (docs/security.md).
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { apiKeyListSchema, createApiKey, createApiKeySchema, createdApiKeySchema, listApiKeys, presentApiKey, revokeApiKey } from './service.ts';

const TAG = 'Keys';

export const keyRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/company/api-keys',
    auth: 'required',
    scope: 'keys:write',
    body: createApiKeySchema,
    doc: {
      operationId: 'createApiKey',
      summary: 'Create a restricted API key',
      description:
        'A key of the calling token\'s mode with the scopes named (no more than the caller holds: 403 otherwise), optionally expiring. The token (`rk_test_…`/`rk_live_…`) is in this answer only; it authenticates like the public token (`Authorization: Bearer`) with just these scopes (docs/security.md).',
      tag: TAG,
      requestExample: { name: 'Shop front-end', scopes: ['invoices:write', 'invoices:read'], expiresAt: '2027-01-01T00:00:00.000Z' },
      responses: { 201: { description: 'The key, with its token (shown only here).', schema: createdApiKeySchema } },
      errors: [403, 409],
    },
    handler: async (req, ctx) => {
      const { key, token } = await createApiKey(ctx.keys, req.company!, req.access!, req.body);
      return { status: 201, body: { ...presentApiKey(key), token } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/company/api-keys',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'listApiKeys',
      summary: 'List the API keys',
      description: 'The keys of this mode that are not revoked, newest first, without their tokens.',
      tag: TAG,
      responses: { 200: { description: 'The keys.', schema: apiKeyListSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => ({ status: 200, body: { apiKeys: (await listApiKeys(ctx.keys, req.company!.id)).map(presentApiKey) } }),
  }),
  route({
    method: 'DELETE',
    path: '/api/company/api-keys/:id',
    auth: 'required',
    scope: 'keys:write',
    doc: {
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'At once and on every instance: calls with it answer 401 from now on, and its live connections end within 2 s.',
      tag: TAG,
      params: { id: z.uuid().meta({ description: 'The key id.' }) },
      responses: { 204: { description: 'Revoked.' } },
      errors: [403, 404],
    },
    handler: async (req, ctx) => {
      await revokeApiKey(ctx.keys, req.company!, req.access!.actor, req.params['id']!);
      return { status: 204 };
    },
  }),
];
