import { PothosValidationError } from '@pothos/core';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ASTVisitor, type StringValueNode, type ValidationContext, type ValidationRule } from 'graphql';
import { findInputProblem, textProblem } from '../http/input-guard.ts';
import { graphqlLimits } from './limits.ts';
import type { IncomingMessage } from 'node:http';
import { isTransientTransactionError } from '../db/client.ts';
import { AppError } from '../errors/app-error.ts';
import { bearerToken } from '../http/rest.ts';
import type { Company } from '../companies/service.ts';
import type { Logger } from '../logger.ts';
import type { GraphQLContext } from './builder.ts';
import { schema } from './schema.ts';

export interface YogaDeps {
  base: Omit<GraphQLContext, 'company' | 'requestId'>;
  authenticate: (token: string) => Promise<Company | null>;
  graphiql: boolean;
  introspection: boolean;
  logger: Logger;
}

export interface ServerContext {
  req: IncomingMessage;
  requestId: string;
}

const validationRule = (rule: ValidationRule): Plugin => ({
  onValidate: ({ addValidationRule }) => addValidationRule(rule),
});

const invalidInput = (path: string, message: string) =>
  new GraphQLError(`${path ? `${path} ` : ''}${message}`, {
    extensions: { code: 'VALIDATION_FAILED', details: [{ path, message }], http: { status: 400 } },
  });

/**
 * The edge check REST bodies get, for GraphQL: variables and the document text before parsing, string
 * literals (whose escapes can spell a NUL) during validation.
 */
const inputGuard: Plugin = {
  onParams({ params, setResult }) {
    const queryProblem = typeof params.query === 'string' ? textProblem(params.query) : null;
    const problem =
      findInputProblem(params.variables ?? null, ['variables']) ??
      findInputProblem(params.operationName ?? null, ['operationName']) ??
      (queryProblem ? { path: 'query', message: queryProblem } : null);
    if (problem) setResult({ errors: [invalidInput(problem.path, problem.message)] });
  },
  onValidate: ({ addValidationRule }) =>
    addValidationRule((context: ValidationContext): ASTVisitor => ({
      StringValue(node: StringValueNode) {
        const problem = textProblem(node.value);
        if (problem) context.reportError(invalidInput('query', `has a string literal that ${problem}`));
      },
    })),
};

export function buildYoga(deps: YogaDeps): YogaServerInstance<ServerContext, GraphQLContext> {
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphiql: deps.graphiql ? { title: 'Payrail GraphQL' } : false,
    landingPage: false,
    logging: {
      debug: (...a) => deps.logger.debug({ yoga: a }, 'yoga'),
      info: (...a) => deps.logger.info({ yoga: a }, 'yoga'),
      warn: (...a) => deps.logger.warn({ yoga: a }, 'yoga'),
      // Yoga reports every client error here; real internal errors are logged in maskError below.
      error: (...a) => deps.logger.debug({ yoga: a }, 'yoga error'),
    },
    healthCheckEndpoint: '/graphql/health',
    // app.ts answers 411/413 from Content-Length before Yoga runs and Node never delivers more than that;
    // Yoga's own limit would pipe every body through an extra stream.
    maxRequestBodySize: false,
    plugins: [
      inputGuard,
      ...graphqlLimits({ introspection: deps.introspection }),
      ...(deps.introspection ? [] : [validationRule(NoSchemaIntrospectionCustomRule)]),
    ],
    context: async ({ request, requestId }) => {
      let token: string | null;
      try {
        token = bearerToken(request.headers.get('authorization') ?? undefined);
      } catch (e) {
        throw new GraphQLError((e as Error).message, {
          extensions: { code: 'UNAUTHENTICATED', details: [], http: { status: 401, headers: { 'www-authenticate': 'Bearer' } } },
        });
      }
      let company: Company | null = null;
      if (token !== null) {
        company = await deps.authenticate(token);
        if (!company) {
          throw new GraphQLError('The bearer token is not valid', {
            extensions: { code: 'UNAUTHENTICATED', details: [], http: { status: 401, headers: { 'www-authenticate': 'Bearer' } } },
          });
        }
      }
      return { ...deps.base, company, requestId: requestId ?? '' };
    },
    maskedErrors: {
      // AppErrors are meant for the client; anything else is a bug and stays masked (and logged).
      maskError: (error, message) => {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (original instanceof AppError) {
          return new GraphQLError(original.message, {
            ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
            extensions: { code: original.code, details: original.details },
          });
        }
        // Pothos refuses malformed arguments (an undecodable cursor, say) before our resolvers run.
        if (original instanceof PothosValidationError) {
          return new GraphQLError(original.message, {
            ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
            extensions: { code: 'VALIDATION_FAILED', details: [] },
          });
        }
        // graphql-js's own errors (syntax, validation, variable coercion) describe the request, not us.
        if (error instanceof GraphQLError && (!original || original instanceof GraphQLError)) return error;
        deps.logger.error({ err: original ?? error }, 'graphql internal error');
        if (isTransientTransactionError(original)) {
          return new GraphQLError('The database is busy; retry the request', { extensions: { code: 'SERVICE_UNAVAILABLE' } });
        }
        return new GraphQLError(message, { extensions: { code: 'INTERNAL' } });
      },
    },
  });
}
