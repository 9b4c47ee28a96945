// The OpenAPI 3.1 document of the REST API, built from the routes themselves: their body and query zod schemas
// (what the server validates), their `doc` (summary, params, headers, response schemas next to the presenters)
// and their auth mode. Nothing here is written twice, so the document cannot drift from the code (docs/openapi.md).
import { OpenApiGeneratorV31, OpenAPIRegistry, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import type { ErrorCode } from '../errors/app-error.ts';
import { errorBodySchema } from '../http/io.ts';
import type { HeaderDoc, ResponseDoc, Route } from '../http/router.ts';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** The contract's own version: raised when it changes in a way a client can notice. */
export const API_VERSION = '1.0.0';

export interface TagDoc {
  name: string;
  description: string;
}

export interface DocumentOptions {
  /** The groups of the reference page, in this order; a route's tag not among them is added after them, without a description. */
  tags: TagDoc[];
  description?: string;
  /** The webhook bodies the features send (OpenAPI 3.1 `webhooks`), one entry each. */
  webhooks?: readonly WebhookDoc[];
}

/** The headers of every webhook request (docs/webhooks.md, "What is sent"). */
const webhookHeaders = z.object({
  signature: z.string().regex(/^[0-9a-f]{128}$/).meta({
    description: "The spec's signature: lower-case hex HMAC-SHA512 of the exact body bytes, keyed by the trimmed secret key of the event's mode.",
  }),
  'webhook-id': z.string().meta({ description: 'Standard Webhooks: the event id, the same on every retry and redelivery (dedupe on it).' }),
  'webhook-timestamp': z.string().regex(/^\d+$/).meta({ description: 'Standard Webhooks: Unix seconds when this attempt was signed; refuse old ones.' }),
  'webhook-signature': z.string().meta({
    description: 'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, keyed by the secret key\'s UTF-8 bytes (libraries take `whsec_` + base64 of them).',
  }),
  'payrail-mode': z.enum(['test', 'live']).meta({ description: 'The mode of the merchant side the event is about.' }),
  'user-agent': z.string().meta({ description: '`Payrail-Webhooks/1`.' }),
});

const WEBHOOK_ANSWER = 'Any 2xx within 10 s (`WEBHOOK_TIMEOUT_MS`) acknowledges it; anything else, a redirect included, is retried on the schedule of docs/webhooks.md (12 attempts over ~72 h).';

export const BEARER_SCHEME = 'publicToken';

interface ErrorResponse {
  name: string;
  description: string;
  example: { code: ErrorCode; message: string };
  headers?: Record<string, { description: string; schema: { type: 'string' } }>;
}

/** The error answers, one shared response each, all of the one Error shape (docs/errors.md). */
const ERROR_RESPONSES: Record<number, ErrorResponse> = {
  400: {
    name: 'MalformedRequest',
    description: '`MALFORMED_REQUEST`: the body is not valid JSON or not valid UTF-8.',
    example: { code: 'MALFORMED_REQUEST', message: 'The request body is not valid JSON: Unexpected end of input' },
  },
  401: {
    name: 'Unauthenticated',
    description:
      '`UNAUTHENTICATED`: a required `Authorization: Bearer <public token>` is missing, or a token sent is invalid or not of the Bearer form (also where the token is optional).',
    example: { code: 'UNAUTHENTICATED', message: 'A valid `Authorization: Bearer <public token>` header is required' },
    headers: { 'WWW-Authenticate': { description: '`Bearer`', schema: { type: 'string' } } },
  },
  403: {
    name: 'Forbidden',
    description: '`FORBIDDEN`: the token is valid but may not do this (e.g. a sandbox operation with a live-mode token).',
    example: { code: 'FORBIDDEN', message: 'The sandbox takes a test-mode token (pk_test_…): a live-mode token never reaches simulated chains or the test clock' },
  },
  404: {
    name: 'NotFound',
    description: '`NOT_FOUND`: no such object, or one of another merchant.',
    example: { code: 'NOT_FOUND', message: 'No invoice with id 7Qx3hHq1bXo9b3kQmZzJ2f' },
  },
  409: {
    name: 'Conflict',
    description:
      "The object's state does not allow the operation (`CONFLICT`, `INVOICE_NOT_PROCEEDABLE`), or an `Idempotency-Key` was used with another request (`IDEMPOTENCY_KEY_REUSED`) or is still being processed (`IDEMPOTENCY_KEY_IN_USE`, retry), or an invoice `orderId` names an open invoice made from another request (`ORDER_ID_IN_USE`).",
    example: { code: 'CONFLICT', message: 'Invoice 7Qx3hHq1bXo9b3kQmZzJ2f is not wrong' },
  },
  413: {
    name: 'PayloadTooLarge',
    description: '`PAYLOAD_TOO_LARGE`: the body exceeds `BODY_LIMIT_BYTES` (256 KiB by default); the connection is closed.',
    example: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds 262144 bytes' },
  },
  415: {
    name: 'UnsupportedMediaType',
    description: '`UNSUPPORTED_MEDIA_TYPE`: a body that is not `application/json`.',
    example: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as JSON with `Content-Type: application/json`' },
  },
  422: {
    name: 'ValidationFailed',
    description:
      '`VALIDATION_FAILED`: a field is missing, of the wrong type, out of range or breaks a rule; `details` names every one. Also text with a NUL character or an unpaired surrogate, JSON nested deeper than 32 levels, a forged cursor.',
    example: { code: 'VALIDATION_FAILED', message: 'The request is invalid' },
  },
  429: {
    name: 'RateLimited',
    description: '`RATE_LIMITED`: too many failed authentications from this client address; wait `Retry-After` seconds (a valid token still passes; docs/security.md).',
    example: { code: 'RATE_LIMITED', message: 'Too many failed authentications from this address: retry in 600 s' },
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' } } },
  },
  500: {
    name: 'Internal',
    description: '`INTERNAL`: a bug. The message carries no internals; the server log has them under the request id.',
    example: { code: 'INTERNAL', message: 'Internal error; the request id identifies it in the logs' },
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      "`SERVICE_UNAVAILABLE`: the database gave up on the transaction (safe to retry), or a currency's network is off or its node does not answer. `RATE_UNAVAILABLE`: no good exchange rate of the payment currency now (docs/rates.md); the message names the currency and why.",
    example: { code: 'SERVICE_UNAVAILABLE', message: 'The database is busy; retry the request' },
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' } } },
  },
};

/** The error statuses a route may answer whatever it does (RouteDoc.errors adds its own). */
export function commonErrorStatuses(route: Pick<Route<unknown>, 'method' | 'auth' | 'scope'>): number[] {
  return [
    ...(route.method === 'GET' ? [] : [400, 413, 415]),
    ...(route.auth === 'none' ? [] : [401, 429]),
    // A restricted API key without the route's scope.
    ...(route.scope ? [403] : []),
    422,
    500,
    503,
  ];
}

const REQUEST_ID_HEADER = { $ref: '#/components/headers/RequestId' };
const MODE_HEADER = { $ref: '#/components/headers/PayrailMode' };

/** `/api/invoices/v1/regular/:id` as OpenAPI writes it: `/api/invoices/v1/regular/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([a-zA-Z]+)/g, '{$1}');

const pathParams = (path: string) => [...path.matchAll(/:([a-zA-Z]+)/g)].map((m) => m[1]!);

const pascal = (words: string[]) => words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

/** `GET /api/company/exports/ledger.csv` -> `getCompanyExportsLedgerCsv`, for routes that name no operationId. */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((s) => s && s !== 'api' && !s.startsWith(':'))
    .flatMap((s) => s.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return method.toLowerCase() + pascal(words);
}

const operationIdOf = (route: Route<unknown>) => route.doc?.operationId ?? derivedOperationId(route.method, route.path);

function headerParameters(headers: Record<string, string | HeaderDoc>) {
  const shape = Object.fromEntries(
    Object.entries(headers).map(([name, header]) => {
      const doc: HeaderDoc = typeof header === 'string' ? { description: header, schema: z.string() } : header;
      return [name, (doc.required ? doc.schema : doc.schema.optional()).meta({ description: doc.description })];
    }),
  );
  return z.object(shape);
}

/** `withMode`: the answer carries `Payrail-Mode` (an authenticated call's, or the object's own mode). */
function successResponse(response: ResponseDoc, withMode: boolean): ResponseConfig {
  const headers = {
    'X-Request-Id': REQUEST_ID_HEADER,
    ...(withMode ? { 'Payrail-Mode': MODE_HEADER } : {}),
    ...Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' as const } }])),
  };
  const example = response.example === undefined ? {} : { example: response.example };
  const content = response.contentType
    ? { [response.contentType]: { schema: { type: 'string' as const }, ...example } }
    : response.schema
      ? { 'application/json': { schema: response.schema, ...example } }
      : undefined;
  return { description: response.description, headers, ...(content ? { content } : {}) };
}

/** A request body is optional when its schema takes an empty body. */
const bodyRequired = (body: z.ZodType) => !body.safeParse(undefined).success;

/** The OpenAPI 3.1 document of `routes`. Throws on a route without a doc, a path parameter without a schema, a duplicate operationId or an error status without a shared response. */
export function buildOpenApiDocument(routes: readonly Route<unknown>[], options: DocumentOptions): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', BEARER_SCHEME, {
    type: 'http',
    scheme: 'bearer',
    description:
      "The merchant's public token of one mode (`pk_test_...` or `pk_live_...`, every scope, valid until rotated) or a restricted API key (`rk_test_...`/`rk_live_...`, the scopes it was made with; docs/security.md): `Authorization: Bearer <token>`. An operation lists the scope it needs.",
  });
  registry.registerComponent('headers', 'RequestId', {
    description: 'Identifies the request in the server logs; echoes a client-sent `X-Request-Id` of 1-128 characters of `A-Za-z0-9_.:-`.',
    schema: { type: 'string' },
  });
  registry.registerComponent('headers', 'PayrailMode', {
    description: '`test` or `live`: the mode of the token that called, or of the object read (docs/modes.md).',
    schema: { type: 'string', enum: ['test', 'live'] },
  });
  for (const error of Object.values(ERROR_RESPONSES)) {
    registry.registerComponent('responses', error.name, {
      description: error.description,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...error.headers },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          example: { error: { ...error.example, details: [], requestId: '5b0a3f0e-8d0e-4a8e-9a43-2f3f7d1f2a11' } },
        },
      },
    });
  }

  const tags = [...options.tags];
  const operationIds = new Set<string>();
  for (const route of routes) {
    const doc = route.doc;
    const where = `${route.method} ${route.path}`;
    if (!doc) throw new Error(`${where} has no doc: every public route is in the OpenAPI document`);
    if (!tags.some((t) => t.name === doc.tag)) tags.push({ name: doc.tag, description: '' });
    const operationId = operationIdOf(route);
    if (operationIds.has(operationId)) throw new Error(`${where}: operationId ${operationId} is used twice`);
    operationIds.add(operationId);
    const params = pathParams(route.path);
    const missing = params.filter((p) => !doc.params?.[p]);
    if (missing.length) throw new Error(`${where}: no schema for the path parameter(s) ${missing.join(', ')}`);

    const errors = [...new Set([...commonErrorStatuses(route), ...(doc.errors ?? [])])].sort((a, b) => a - b);
    const unknown = errors.filter((s) => !ERROR_RESPONSES[s]);
    if (unknown.length) throw new Error(`${where}: no shared error response for ${unknown.join(', ')}`);
    const body = route.body && !z.globalRegistry.get(route.body)?.id ? route.body.meta({ id: `${pascal([operationId])}Request` }) : route.body;
    const scopes = route.scope ? [route.scope] : [];
    const config: RouteConfig = {
      method: route.method.toLowerCase() as RouteConfig['method'],
      path: openApiPath(route.path),
      operationId,
      summary: doc.summary,
      ...(doc.description || route.scope ? { description: [doc.description, route.scope ? `Scope: \`${route.scope}\`.` : ''].filter(Boolean).join('\n\n') } : {}),
      tags: [doc.tag],
      // The scope an API key needs (OpenAPI 3.1 lets a bearer scheme list the roles it requires).
      security: route.auth === 'required' ? [{ [BEARER_SCHEME]: scopes }] : route.auth === 'optional' ? [{ [BEARER_SCHEME]: scopes }, {}] : [],
      request: {
        ...(params.length ? { params: z.object(doc.params) } : {}),
        ...(route.query ? { query: route.query as z.ZodObject } : {}),
        ...(doc.headers ? { headers: headerParameters(doc.headers) } : {}),
        ...(body
          ? {
              body: {
                required: bodyRequired(body),
                content: { 'application/json': { schema: body, ...(doc.requestExample === undefined ? {} : { example: doc.requestExample }) } },
              },
            }
          : {}),
      },
      responses: {
        ...Object.fromEntries(Object.entries(doc.responses).map(([status, response]) => [status, successResponse(response, route.auth !== 'none' || doc.modeHeader === true)])),
        ...Object.fromEntries(errors.map((status) => [status, { $ref: `#/components/responses/${ERROR_RESPONSES[status]!.name}` }])),
      },
    };
    registry.registerPath(config);
  }

  for (const webhook of options.webhooks ?? []) {
    registry.registerWebhook({
      method: 'post',
      path: webhook.name,
      operationId: `${webhook.name}Webhook`,
      summary: webhook.summary,
      description: webhook.description,
      tags: ['Webhooks'],
      request: {
        headers: webhookHeaders,
        body: { required: true, content: { 'application/json': { schema: webhook.schema, example: webhook.example } } },
      },
      responses: { '2XX': { description: WEBHOOK_ANSWER } },
    });
  }

  // The Error schema (its meta id names it) is referenced from the shared error responses only, so it is listed
  // itself (a bare zod schema among the definitions would be skipped: zod 4 schemas have a `type` key).
  const definitions = [...registry.definitions, { type: 'schema' as const, schema: errorBodySchema }];
  return new OpenApiGeneratorV31(definitions, { sortComponents: 'alphabetically' }).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Payrail REST API',
      version: API_VERSION,
      description: options.description ?? '',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags,
  });
}
