import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLError, Kind } from 'graphql';
import type PrismaTypes from '../../generated/pothos-types.ts';
import { getDatamodel } from '../../generated/pothos-types.ts';
import type { Company } from '../core/auth.ts';
import type { Services } from '../core/feature.ts';
import { readDecimal } from '../domain/money.ts';
import { AppError, ConflictError, NotFoundError, UnauthenticatedError, ValidationError, type ErrorDetail } from '../errors/app-error.ts';
import { INSTANT_MESSAGE, parseInstant } from '../core/validation.ts';

/** Every feature's services (as in REST handlers), the caller and the request id. */
export type GraphQLContext = Services & {
  company: Company | null;
  requestId: string;
};

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  AuthScopes: { merchant: boolean };
  DefaultFieldNullability: false;
  Scalars: {
    Decimal: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date };
  };
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ merchant: ctx.company !== null }),
    unauthorizedError: () => new UnauthenticatedError(),
  },
  errors: {
    defaultTypes: [],
    defaultResultOptions: { name: ({ fieldName }) => `${capitalize(fieldName)}Success` },
    defaultUnionOptions: { name: ({ fieldName }) => `${capitalize(fieldName)}Result` },
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
  },
});

builder.queryType({});
builder.mutationType({});

/** A Decimal input as its exact text, read by the project's decimal parser (bounded, fits the amount column). */
function decimalText(text: string | null): string {
  const reading = text === null ? null : readDecimal(text);
  if (text !== null && reading?.ok) return text;
  throw new GraphQLError(`Decimal ${reading && !reading.ok ? reading.message : 'must be a decimal number given as a string'}`);
}

// Decimal: a string on the wire. Literals keep their exact source digits; variables may be strings or numbers.
builder.scalarType('Decimal', {
  description: 'An exact decimal number, serialised as a string (e.g. "10.50"). Never a float.',
  serialize: (value) => String(value),
  parseValue: (value) => decimalText(typeof value === 'string' || typeof value === 'number' ? String(value) : null),
  parseLiteral: (ast) => decimalText(ast.kind === Kind.STRING || ast.kind === Kind.FLOAT || ast.kind === Kind.INT ? ast.value : null),
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

const ErrorDetailRef = builder.objectRef<ErrorDetail>('ErrorDetail').implement({
  description: 'One problem with the input: the dotted path of the field and what is wrong with it.',
  fields: (t) => ({
    path: t.exposeString('path'),
    message: t.exposeString('message'),
  }),
});

/** The interface every typed error implements; `code` matches the REST error codes. */
export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  fields: (t) => ({
    code: t.exposeString('code'),
    message: t.exposeString('message'),
    details: t.field({ type: [ErrorDetailRef], resolve: (e) => e.details }),
  }),
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
