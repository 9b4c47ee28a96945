import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLError, Kind, valueFromASTUntyped } from 'graphql';
import type PrismaTypes from '../../generated/pothos-types.ts';
import { getDatamodel } from '../../generated/pothos-types.ts';
import type { Company } from '../core/auth.ts';
import { missingScopeMessage, type Access, type Scope } from '../core/scopes.ts';
import type { Services } from '../core/feature.ts';
import { readDecimal } from '../domain/money.ts';
import { AppError, ConflictError, ERROR_STATUS, ForbiddenError, NotFoundError, RateUnavailableError, UnauthenticatedError, ValidationError, type ErrorCode, type ErrorDetail } from '../errors/app-error.ts';
import { INSTANT_MESSAGE, parseInstant } from '../core/validation.ts';
import { decodeNodeId, encodeNodeId } from './node-ids.ts';

/** Every feature's services (as in REST handlers), the caller and the request id. */
export type GraphQLContext = Services & {
  company: Company | null;
  /** With `company`: its scopes and who it is (key, client address), as for REST. */
  access: Access | null;
  requestId: string;
  /** The request's Accept-Language header (the client's e-mails' language when an input names none). */
  acceptLanguage?: string | null;
};

/** The scope a field's check refused, from the plugin's failure (the first one found). */
function refusedScope(failure: unknown): Scope | null {
  if (!failure || typeof failure !== 'object') return null;
  const f = failure as { scope?: string; parameter?: unknown; failures?: unknown[] };
  if (f.scope === 'scope' && typeof f.parameter === 'string') return f.parameter as Scope;
  for (const inner of f.failures ?? []) {
    const found = refusedScope(inner);
    if (found) return found;
  }
  return null;
}

/** Most global ids one `nodes` query resolves. */
export const MAX_NODE_IDS = 100;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  // merchant: any authenticated caller; scope: a caller holding that scope (docs/security.md).
  AuthScopes: { merchant: boolean; scope: Scope };
  DefaultFieldNullability: false;
  Scalars: {
    Decimal: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date };
    Metadata: { Input: Record<string, unknown>; Output: Record<string, string> };
  };
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ merchant: ctx.company !== null, scope: (scope: Scope) => ctx.access?.scopes.has(scope) ?? false }),
    // A merchant subscription is refused before it starts listening, not when its first event resolves.
    authorizeOnSubscribe: true,
    unauthorizedError: (_parent, ctx, _info, result) => {
      if (ctx.company === null) return new UnauthenticatedError();
      const scope = refusedScope(result.failure);
      return scope ? new ForbiddenError(missingScopeMessage(scope)) : new ForbiddenError(result.message);
    },
  },
  errors: {
    defaultTypes: [],
    defaultResultOptions: {
      name: ({ fieldName }) => `${capitalize(fieldName)}Success`,
      description: 'The mutation succeeded; the field names what it carries.',
    },
    defaultUnionOptions: {
      name: ({ fieldName }) => `${capitalize(fieldName)}Result`,
      description: 'What the mutation did: its success object or one of the typed errors (switch on __typename).',
    },
  },
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: encodeNodeId,
    decodeGlobalID: decodeNodeId,
    nodesOnConnection: { description: 'The nodes of the edges, for clients that need no cursors.' },
    nodeTypeOptions: { description: 'An object with a global id: refetch it with `node(id:)`; caches key it by `id`.' },
    idFieldOptions: { description: 'Global id, also accepted by `node(id:)`.' },
    pageInfoTypeOptions: { description: 'Where a page sits in the whole list (Relay cursor connections).' },
    hasNextPageFieldOptions: { description: 'More items follow this page (when paging forward).' },
    hasPreviousPageFieldOptions: { description: 'More items precede this page (when paging backward).' },
    startCursorFieldOptions: { description: 'Cursor of the first edge; pass as `before` for the previous page.' },
    endCursorFieldOptions: { description: 'Cursor of the last edge; pass as `after` for the next page.' },
    cursorFieldOptions: { description: 'Opaque position of this edge, for `after` and `before`.' },
    nodeFieldOptions: { description: 'The item at this position.' },
    edgesFieldOptions: { description: 'The items of this page with their cursors.' },
    pageInfoFieldOptions: { description: 'Cursors and whether more pages exist.' },
    firstArgOptions: { description: 'Page size when paging forward (at most 100).' },
    afterArgOptions: { description: 'Items after this cursor (an `endCursor` of a previous page).' },
    lastArgOptions: { description: 'Page size when paging backward (at most 100).' },
    beforeArgOptions: { description: 'Items before this cursor (a `startCursor` of a previous page).' },
    defaultConnectionTypeOptions: { description: 'One page of a list, in Relay cursor connection form.' },
    defaultEdgeTypeOptions: { description: 'One item of a page with its cursor.' },
    nodeQueryOptions: {
      description: 'Any object by its global id; null when it does not exist or is not visible to the caller.',
      args: { id: { description: 'A global id from an `id` field.' } },
    },
    nodesQueryOptions: {
      description: `Objects by their global ids, in the order given (at most ${MAX_NODE_IDS}); null for each one that does not exist or is not visible.`,
      args: { ids: { description: 'Global ids from `id` fields.' } },
      resolve: (_root, { ids }, _ctx, _info, resolveNodes) => {
        if (ids.length > MAX_NODE_IDS) throw new ValidationError([{ path: 'ids', message: `must hold at most ${MAX_NODE_IDS} ids` }]);
        return resolveNodes(ids);
      },
    },
  },
});

builder.queryType({ description: 'Reads. Merchant fields need the `Authorization: Bearer <public token>` header; public ones say so.' });
builder.mutationType({ description: 'Changes. Each takes one `input` and answers a result to switch on: its success object or a typed error.' });
builder.subscriptionType({
  description: 'Live changes, published only after the change committed (graphql-ws on /graphql, or SSE with Accept: text/event-stream).',
});

/** A Decimal input as its exact text, read by the project's decimal parser (bounded, fits the amount column). */
function decimalText(text: string | null): string {
  const reading = text === null ? null : readDecimal(text);
  if (text !== null && reading?.ok) return text;
  throw new GraphQLError(`Decimal ${reading && !reading.ok ? reading.message : 'must be a decimal number given as a string'}`);
}

// Decimal: a string on the wire, in both directions. A JSON number has already passed through a float by the time
// we see it (0.1 + 0.2 rounding, 1e21 notation), so numbers are refused rather than guessed at.
builder.scalarType('Decimal', {
  description: 'An exact decimal number, always written as a string (e.g. "10.50"), in answers and in inputs; a JSON number is refused.',
  serialize: (value) => String(value),
  parseValue: (value) => decimalText(typeof value === 'string' ? value : null),
  parseLiteral: (ast) => decimalText(ast.kind === Kind.STRING ? ast.value : null),
});

builder.scalarType('DateTime', {
  description: 'An instant in ISO 8601 with milliseconds and Z, e.g. 2026-11-21T10:00:00.000Z.',
  serialize: (value) => (value instanceof Date ? value : new Date(String(value))).toISOString(),
  parseValue: (value) => {
    const d = typeof value === 'string' ? parseInstant(value) : null;
    if (!d) throw new GraphQLError(`DateTime ${INSTANT_MESSAGE}`);
    return d;
  },
  parseLiteral: (ast) => {
    const d = ast.kind === Kind.STRING ? parseInstant(ast.value) : null;
    if (!d) throw new GraphQLError(`DateTime ${INSTANT_MESSAGE}`);
    return d;
  },
});

/** An object as JSON has it: its values are checked by the input's zod schema (REST's, so the same messages). */
function metadataObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new GraphQLError('Metadata must be an object of string values');
  return value as Record<string, unknown>;
}

// Metadata: the REST map as is (an object of strings), rather than a list of key/value pairs, so both surfaces read alike.
builder.scalarType('Metadata', {
  description: 'A flat object of string keys and string values, e.g. {"customerId": "c_981"}: at most 50 keys of 1-40 characters, values of at most 500 characters. Keys keep the order sent.',
  serialize: (value) => value as Record<string, string>,
  parseValue: metadataObject,
  parseLiteral: (ast, variables) => metadataObject(ast.kind === Kind.OBJECT ? valueFromASTUntyped(ast, variables) : null),
});

const ErrorDetailRef = builder.objectRef<ErrorDetail>('ErrorDetail').implement({
  description: 'One problem with the input: the dotted path of the field and what is wrong with it.',
  fields: (t) => ({
    path: t.exposeString('path', { description: 'Dotted path of the offending input field, e.g. `items.2.price`; empty for the whole input.' }),
    message: t.exposeString('message', { description: 'What is wrong with it, in English.' }),
  }),
});

const ERROR_CODE_DESCRIPTIONS: Record<ErrorCode, string> = {
  MALFORMED_REQUEST: 'The request could not be read (REST 400).',
  UNAUTHENTICATED: 'No valid merchant token was sent (REST 401).',
  FORBIDDEN: 'The token may not do this (REST 403).',
  NOT_FOUND: 'The object does not exist or is not visible to the caller (REST 404).',
  METHOD_NOT_ALLOWED: 'The path does not take this HTTP method (REST 405).',
  CONFLICT: 'The object is in a state that does not allow this operation (REST 409).',
  INVOICE_NOT_PROCEEDABLE: 'The invoice was already filled with other data, or is no longer open (REST 409).',
  IDEMPOTENCY_KEY_IN_USE: 'A request with this idempotency key is still running (REST 409).',
  ORDER_ID_IN_USE: 'An open invoice of the merchant already has this orderId, created from a different request (REST 409).',
  LENGTH_REQUIRED: 'The request body has no declared length (REST 411).',
  PAYLOAD_TOO_LARGE: 'The request body is too large (REST 413).',
  UNSUPPORTED_MEDIA_TYPE: 'The request body is not JSON (REST 415).',
  VALIDATION_FAILED: 'The input is invalid; `details` names each offending field (REST 422).',
  IDEMPOTENCY_KEY_REUSED: 'The idempotency key was used before with a different input (REST 409).',
  RATE_LIMITED: 'The caller holds too much open at once (live connections or subscriptions); close something first (REST 429).',
  SERVICE_UNAVAILABLE: 'The service cannot take the request now; retry later (REST 503).',
  RATE_UNAVAILABLE: 'No good exchange rate of the payment currency exists now (no fresh source, too few agreeing sources, or none configured); other currencies may work (REST 503).',
  INTERNAL: 'An unexpected failure on our side (REST 500).',
};

/** The REST error codes, one enum value each, same spelling. */
export const ErrorCodeEnum = builder.enumType('ErrorCode', {
  description: 'Why an operation failed; the same codes as the REST error `code`.',
  values: Object.fromEntries(
    (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [code, { value: code, description: ERROR_CODE_DESCRIPTIONS[code] }]),
  ) as Record<ErrorCode, { value: ErrorCode; description: string }>,
});

/** The interface every typed error implements; `code` matches the REST error codes. */
export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  description: 'A typed error a mutation answers instead of its success object.',
  fields: (t) => ({
    code: t.field({ type: ErrorCodeEnum, description: 'The REST error code of this failure.', resolve: (e) => e.code }),
    message: t.exposeString('message', { description: 'What went wrong, in English.' }),
    details: t.field({ type: [ErrorDetailRef], description: 'One entry per offending input field; empty when none applies.', resolve: (e) => e.details }),
  }),
});

/**
 * The `errors` option of a mutation: the typed errors it answers and the name of what its success object carries.
 * `carries` is the field of the success object (`invoice`, not `data`).
 */
export const mutationOutcome = (carries: string, description: string, types: (new (...args: never[]) => AppError)[]) => ({
  types,
  dataField: { name: carries, description },
});

/** Declares a GraphQL object for an AppError subclass, so mutations can list it in `errors.types`. */
export function errorObject<T extends AppError>(cls: new (...args: never[]) => T, name: string, description: string) {
  builder.objectType(cls as unknown as typeof AppError, {
    name,
    description,
    interfaces: [ErrorInterface],
    isTypeOf: (value: unknown) => value instanceof cls,
  });
}

errorObject(ValidationError, 'ValidationError', 'The input is invalid; `details` names each offending field.');
errorObject(NotFoundError, 'NotFoundError', 'The object does not exist (or is not visible to the caller).');
errorObject(ConflictError, 'ConflictError', 'The object is in a state that does not allow this operation.');
errorObject(RateUnavailableError, 'RateUnavailableError', 'No good exchange rate of the payment currency now (docs/rates.md); another currency may work, or this one later (REST 503).');
errorObject(ForbiddenError, 'ForbiddenError', 'The caller may not do this (e.g. a sandbox operation with a live-mode token).');
