// GraphQL over WebSocket (the graphql-transport-ws protocol of graphql-ws, on the `ws` package) on the same port and
// path as Yoga. Operations run through Yoga's envelop, so they meet the same limits, input checks, context and
// error masking as HTTP. The merchant token travels in connectionParams: {"authorization": "Bearer <token>"}.
import type { Server } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { randomUUID } from 'node:crypto';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { findInputProblem, textProblem } from '../http/input-guard.ts';
import type { GraphQLContext } from './builder.ts';
import type { ServerContext } from './yoga.ts';

export interface GraphqlWsOptions {
  path: string;
  /** The caller behind a token; throws on a bad token (the connection is then refused with 4403). */
  caller: (authorization: string | undefined) => Promise<unknown>;
  /** Milliseconds a client has to send connection_init. */
  connectionInitWaitTimeoutMs?: number;
  /** Ping interval; a client that stops answering is dropped. */
  keepAliveMs?: number;
}

const authorizationOf = (params: Record<string, unknown> | undefined): string | undefined => {
  const value = params?.['authorization'] ?? params?.['Authorization'];
  return typeof value === 'string' ? value : undefined;
};

type Enveloped = ReturnType<YogaServerInstance<ServerContext, GraphQLContext>['getEnveloped']>;

export function attachGraphqlWs(server: Server, yoga: YogaServerInstance<ServerContext, GraphQLContext>, options: GraphqlWsOptions) {
  const wss = new WebSocketServer({ server, path: options.path });
  const disposable = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: options.connectionInitWaitTimeoutMs ?? 3_000,
      // A token that is sent must be valid: the connection is refused (4403) before any operation.
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.connectionParams);
        if (authorization === undefined) return true;
        try {
          await options.caller(authorization);
          return true;
        } catch {
          return false;
        }
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        // The edge check HTTP requests get (NUL, unpaired surrogates, nesting), for the document and variables.
        const textIssue = textProblem(payload.query);
        const problem = textIssue ? { path: 'query', message: textIssue } : findInputProblem(payload.variables ?? null, ['variables']);
        if (problem) return [new GraphQLError(`${problem.path} ${problem.message}`, { extensions: { code: 'VALIDATION_FAILED', details: [problem] } })];
        const authorization = authorizationOf(ctx.connectionParams);
        // Yoga's context factory reads the Authorization header of a Fetch request: give it the token that way.
        const request = new Request('http://localhost/graphql', { method: 'POST', headers: authorization ? { authorization } : {} });
        const enveloped = yoga.getEnveloped({ request, req: ctx.extra.request, requestId: randomUUID(), params: payload } as never);
        const document = enveloped.parse(payload.query);
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors;
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: enveloped,
        };
        return args;
      },
    },
    wss,
    options.keepAliveMs ?? 12_000,
  );
  return {
    /** Closes every socket (1001 going away) and the server. */
    async close(): Promise<void> {
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
