// The OpenAPI document (docs/openapi.md): committed and served exactly as the code builds it, a valid OpenAPI 3.1
// document, one operation per route the server knows and no other, and a faithful account of what clients send and
// get (inputs as accepted before transforms, outputs as presented, security, idempotency, errors).
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { apiReference, apiRoutes } from '../../src/features.ts';
import { openApiPath } from '../../src/openapi/document.ts';
import { DOCUMENT_PATH } from '../../src/openapi/reference.ts';
import { useServer } from '../support/server.ts';

type Json = Record<string, any>;
const committed = () => readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
const doc = apiReference().document() as unknown as Json;
const operations = Object.entries(doc['paths'] as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
);
const operation = (key: string) => operations.find((o) => o.key === key)?.operation ?? expect.fail(`no operation ${key}`);
const routeKeys = (routes: { method: string; path: string }[]) => routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort();

describe('openapi.json', () => {
  it('is committed exactly as the code builds it (run `npm run openapi:print` after changing a route or a schema)', () => {
    expect(committed()).toBe(apiReference().text());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(committed()) as Parameters<Validator['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('does not depend on configuration: a relative server URL, nothing from the environment', () => {
    expect(doc['servers']).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(committed()).not.toMatch(/localhost|127\.0\.0\.1|checkout\.example/);
  });

  it('has one operation per public route, each with a unique operationId, a summary and a described tag', () => {
    expect(operations.map((o) => o.key).sort()).toEqual(routeKeys([...apiRoutes, { method: 'GET', path: DOCUMENT_PATH }]));
    expect(apiRoutes.length).toBeGreaterThanOrEqual(32);
    const ids = operations.map((o) => o.operation['operationId']);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Map((doc['tags'] as { name: string; description: string }[]).map((t) => [t.name, t.description]));
    for (const { key, operation } of operations) {
      expect(operation['summary'], key).toBeTruthy();
      expect(operation['tags'], key).toHaveLength(1);
      expect(tags.get(operation['tags'][0]), `${key}: tag ${operation['tags'][0]} has a description`).toBeTruthy();
    }
  });

  it('names the security of every operation from its auth mode (none, optional or required Bearer token) and the scope it needs', () => {
    expect(doc['components']['securitySchemes']['publicToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const route of apiRoutes) {
      const op = operation(`${route.method} ${openApiPath(route.path)}`);
      // Every route that reads a token names the scope an API key needs (docs/security.md), and answers 403 without it.
      if (route.auth !== 'none') expect(route.scope, `${route.method} ${route.path} names a scope`).toBeDefined();
      const scopes = route.scope ? [route.scope] : [];
      const expected = { none: [], optional: [{ publicToken: scopes }, {}], required: [{ publicToken: scopes }] }[route.auth];
      expect(op['security'], `${route.method} ${route.path}`).toEqual(expected);
      if (route.scope) {
        expect(Object.keys(op['responses']), `${route.method} ${route.path}`).toContain('403');
        expect(op['description'], `${route.method} ${route.path}`).toContain(`Scope: \`${route.scope}\``);
      }
    }
    // No token needed; one sent scopes the read to its merchant and mode (docs/modes.md).
    expect(operation('GET /api/invoices/v1/regular/{id}')['security']).toEqual([{ publicToken: ['invoices:read'] }, {}]);
    expect(operation('POST /api/invoices/v1/regular/{id}/proceed')['security']).toEqual([{ publicToken: ['invoices:write'] }, {}]);
    expect(operation('POST /api/transactions/withdraw')['security']).toEqual([{ publicToken: ['payouts:write'] }]);
  });

  it('refers every error status to a shared response of the one Error shape (docs/errors.md), with 401 where a token is read', () => {
    const responses = doc['components']['responses'] as Record<string, Json>;
    for (const response of Object.values(responses)) expect(response['content']['application/json']['schema']).toEqual({ $ref: '#/components/schemas/Error' });
    for (const { key, operation } of operations) {
      for (const [status, response] of Object.entries(operation['responses'] as Record<string, Json>)) {
        if (Number(status) < 400) continue;
        expect(response['$ref'], `${key} ${status}`).toMatch(/^#\/components\/responses\//);
      }
      const statuses = Object.keys(operation['responses']);
      expect(statuses, key).toEqual(expect.arrayContaining(['422', '500', '503']));
      expect(statuses.includes('401'), key).toBe((operation['security'] as unknown[]).length > 0);
      // Too many failed authentications from one address (docs/security.md).
      expect(statuses.includes('429'), key).toBe((operation['security'] as unknown[]).length > 0);
      if (key.startsWith('GET ')) expect(statuses, key).not.toContain('415');
      else expect(statuses, key).toEqual(expect.arrayContaining(['400', '413', '415']));
    }
    expect(doc['components']['schemas']['Error']['required']).toEqual(['error']);
    expect(doc['components']['schemas']['Error']['properties']['error']['required']).toEqual(['code', 'message', 'details', 'requestId']);
  });

  it('documents Idempotency-Key where it is read and Idempotent-Replayed on the replayed answer', () => {
    for (const key of ['POST /api/invoices/v1/regular', 'POST /api/transactions/withdraw']) {
      const op = operation(key);
      expect(op['parameters'], key).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }));
      expect(op['responses']['200']['headers'], key).toHaveProperty('Idempotent-Replayed');
      expect(op['responses']['409'], key).toEqual({ $ref: '#/components/responses/Conflict' });
    }
    const readers = operations.filter((o) => (o.operation['parameters'] ?? []).some((p: Json) => p['name'] === 'Idempotency-Key')).map((o) => o.key);
    expect(readers.sort()).toEqual(['POST /api/invoices/v1/regular', 'POST /api/transactions/withdraw']);
  });

  it('shows what a client sends before transforms (amounts as JSON number or string) and what the server returns (exact decimal strings)', () => {
    const schemas = doc['components']['schemas'] as Record<string, Json>;
    const price = schemas['CreateInvoiceRequest']!['properties']['items']['items']['properties']['price'];
    expect(price['anyOf']).toEqual([expect.objectContaining({ type: 'string', pattern: expect.any(String) }), { type: 'number' }]);
    // The transform's output (totals, defaults filled in) is not what a client sends.
    expect(schemas['CreateInvoiceRequest']!['properties']).not.toHaveProperty('total');
    expect(schemas['CreateInvoiceRequest']!['required']).toEqual(['invoiceCurrency', 'items']);
    const amount = schemas['WithdrawRequest']!['properties']['items']['items']['properties']['amount'];
    expect(amount['anyOf']).toContainEqual({ type: 'number' });
    expect(schemas['AdvanceSandboxClockRequest']!['properties']['minutes']).toMatchObject({ type: 'number' });
    // Output: prices and amounts are strings of digits; the spec's number fields stay numbers.
    expect(schemas['InvoiceContent']!['properties']['items']['items']['properties']['price']).toMatchObject({ type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' });
    expect(schemas['Withdrawal']!['properties']['amount']).toMatchObject({ type: 'string' });
    expect(schemas['AutoWithdrawal']!['properties']['amount']).toMatchObject({ type: 'number' });
    // Query strings: limits are integers with their bounds and default.
    const limit = operation('GET /api/transactions/withdrawals')['parameters'].find((p: Json) => p['name'] === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } });
  });

  it('gives every example that the document carries a shape its schema accepts', () => {
    const ajv = new Ajv2020({ strict: false });
    formatsModule.default(ajv);
    ajv.addSchema({ $id: 'urn:payrail:components', $defs: JSON.parse(JSON.stringify(doc['components']['schemas']).replaceAll('#/components/schemas/', 'urn:payrail:components#/$defs/')) });
    const checked: string[] = [];
    const check = (where: string, schema: Json, example: unknown) => {
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', 'urn:payrail:components#/$defs/')));
      expect(validate(example), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      checked.push(where);
    };
    for (const { key, operation } of operations) {
      const body = operation['requestBody']?.['content']?.['application/json'];
      if (body?.example !== undefined) check(`${key} request`, body.schema, body.example);
    }
    for (const [name, response] of Object.entries(doc['components']['responses'] as Record<string, Json>)) {
      check(name, response['content']['application/json']['schema'], response['content']['application/json']['example']);
    }
    for (const route of apiRoutes) {
      if (route.body) expect(route.body.safeParse(route.doc?.requestExample).success, `${route.method} ${route.path}: its own schema takes its example`).toBe(true);
    }
    expect(checked.length).toBeGreaterThanOrEqual(20);
  });
});

describe('the served document', () => {
  const server = useServer('pglite', { SANDBOX: '0' });

  it('is the committed one, public and cross-origin readable, and names exactly the routes the server serves', async () => {
    const res = await server.request('GET', DOCUMENT_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.text).toBe(committed());
    const served = Object.entries(res.body.paths as Record<string, Json>).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(served.sort()).toEqual(routeKeys(server.app.routes));
  });
});
