import { PothosValidationError } from '@pothos/core';
import { createYoga, type FetchAPI, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  type ASTVisitor,
  type GraphQLSchema,
  type StringValueNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { checkFormEncodedUtf8, findInputProblem, textProblem, utf8Text } from '../http/input-guard.ts';
import { graphqlLimits } from './limits.ts';
import { liveExecutionPlugin } from './live.ts';
import type { IncomingMessage } from 'node:http';
import type { Authenticated } from '../core/auth.ts';
import type { Services } from '../core/feature.ts';
import { AppError } from '../errors/app-error.ts';
import { clientError, errorHeaders } from '../http/edge.ts';
import type { Logger } from '../logger.ts';
import type { GraphQLContext } from './builder.ts';

export interface YogaDeps {
  schema: GraphQLSchema;
  services: Services;
  /**
   * The caller from the Authorization header (for graphql-ws, the connection's token) and the HTTP request (its
   * address, a session cookie): null without credentials, 401 with a bad one (as for REST).
   */
  session: (authorization: string | undefined, req: IncomingMessage) => Promise<Authenticated | null>;
  clientAddress: (req: IncomingMessage) => string;
  introspection: boolean;
  logger: Logger;
}

export interface ServerContext {
  req: IncomingMessage;
  requestId: string;
  /** An SSE stream's: fires when the credential it authenticated with stops holding; its subscription then ends. */
  liveEnded?: AbortSignal;
}

const validationRule = (rule: ValidationRule): Plugin => ({
  onValidate: ({ addValidationRule }) => addValidationRule(rule),
});

const invalidInput = (path: string, message: string) =>
  new GraphQLError(`${path ? `${path} ` : ''}${message}`, {
    extensions: { code: 'VALIDATION_FAILED', details: [{ path, message }], http: { status: 400 } },
  });

type RequestParser = NonNullable<Parameters<NonNullable<Plugin['onRequestParse']>>[0]['requestParser']>;

/** A request that cannot be read (not UTF-8, not JSON): HTTP 400 with REST's code, whatever Accept says. */
const malformedRequest = (message: string) => new GraphQLError(message, { extensions: { code: 'MALFORMED_REQUEST', details: [], http: { status: 400 } } });

/**
 * Wraps whichever of Yoga's parsers reads this request (GET query string, JSON, form or GraphQL body): the bytes
 * must be UTF-8 (percent-escapes included) before they are decoded, and a body or query string that does not
 * parse answers MALFORMED_REQUEST, as REST does (Yoga would say BAD_REQUEST, or INTERNAL for GET variables).
 */
function strictParser(parse: RequestParser, url: URL, fetchAPI: FetchAPI): RequestParser {
  return async (request) => {
    let readable = request;
    try {
      if (request.method === 'GET') checkFormEncodedUtf8(url.search, 'The query string');
      else {
        const bytes = new Uint8Array(await request.arrayBuffer());
        const text = utf8Text(bytes, 'The request body');
        if ((request.headers.get('content-type') ?? '').toLowerCase().includes('x-www-form-urlencoded')) checkFormEncodedUtf8(text, 'The request body');
        readable = new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, body: bytes });
      }
    } catch (e) {
      throw e instanceof AppError ? malformedRequest(e.message) : e;
    }
    try {
      return await parse(readable);
    } catch (e) {
      if (e instanceof GraphQLError && e.extensions['code'] === 'BAD_REQUEST') {
        const cause = (e.extensions['originalError'] as { message?: string } | undefined)?.message;
        throw malformedRequest(cause ? `The request body is not valid JSON: ${cause}` : e.message);
      }
      // JSON.parse of `variables` or `extensions` in a query string or form body.
      if (e instanceof SyntaxError) throw malformedRequest(`The request's variables or extensions are not valid JSON: ${e.message}`);
      throw e;
    }
  };
}

/**
 * The edge check REST bodies get, for GraphQL: the request's bytes as they are read, variables and the document
 * text before parsing, string literals (whose escapes can spell a NUL) during validation.
 */
const inputGuard: Plugin = {
  onRequestParse({ requestParser, setRequestParser, url, fetchAPI }) {
    // No parser for this request: Yoga answers 415 (or 405) itself.
    if (requestParser) setRequestParser(strictParser(requestParser, url, fetchAPI));
  },
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
    schema: deps.schema,
    // GraphiQL is served by app.ts from node_modules (graphiql.ts): Yoga's own page loads it from a CDN.
    graphiql: false,
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
      liveExecutionPlugin,
      ...graphqlLimits({ introspection: deps.introspection }),
      ...(deps.introspection ? [] : [validationRule(NoSchemaIntrospectionCustomRule)]),
    ],
    context: async ({ request, requestId, req }) => {
      try {
        const found = await deps.session(request.headers.get('authorization') ?? undefined, req);
        return {
          ...deps.services,
          company: found?.company ?? null,
          access: found && { scopes: found.scopes, actor: { credential: found.credential.kind, key: found.key, address: deps.clientAddress(req) } },
          requestId: requestId ?? '',
          acceptLanguage: request.headers.get('accept-language'),
        };
      } catch (e) {
        const error = clientError(e, (err) => deps.logger.error({ err }, 'graphql authentication failed'));
        throw new GraphQLError(error.message, {
          extensions: { code: error.code, details: error.details, http: { status: error.status, headers: errorHeaders(error) } },
        });
      }
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
        const mapped = clientError(original ?? error, (err) => deps.logger.error({ err }, 'graphql internal error'));
        return new GraphQLError(mapped.code === 'INTERNAL' ? message : mapped.message, { extensions: { code: mapped.code } });
      },
    },
  });
}
