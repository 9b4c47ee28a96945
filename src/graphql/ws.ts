// GraphQL over WebSocket (the graphql-transport-ws protocol of graphql-ws, on the `ws` package) on the same port and
// path as Yoga. Operations run through Yoga's envelop, so they meet the same limits, input checks, context and
// error masking as HTTP. The merchant token travels in connectionParams: {"authorization": "Bearer <token>"}.
import type { Server } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { randomUUID } from 'node:crypto';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { findInputProblem, textProblem } from '../http/input-guard.ts';
import type { GraphQLContext } from './builder.ts';
import { tooManySubscriptions, type LiveLimits, type LiveSlot } from './live-limits.ts';
import type { ServerContext } from './yoga.ts';

export interface GraphqlWsOptions {
  path: string;
  /** The caller behind a token; throws on a bad token (the connection is then refused with 4403). */
  caller: (authorization: string | undefined) => Promise<{ id: string } | null>;
  /** Shared with the SSE streams: connections per client address and per merchant, subscriptions per connection. */
  limits: LiveLimits;
  /** Milliseconds a client has to send connection_init. */
  connectionInitWaitTimeoutMs?: number;
  /** Ping interval; a client that stops answering is dropped. */
  keepAliveMs?: number;
  /** A connection with no subscription running for this long is closed (1000), so idle sockets free their slot. */
  idleTimeoutMs: number;
}

const authorizationOf = (params: Record<string, unknown> | undefined): string | undefined => {
  const value = params?.['authorization'] ?? params?.['Authorization'];
  return typeof value === 'string' ? value : undefined;
};

type Enveloped = ReturnType<YogaServerInstance<ServerContext, GraphQLContext>['getEnveloped']>;

/** Closed with this code when a client address or merchant holds too many connections. */
export const TOO_MANY_CONNECTIONS = 4429;

/** What one socket holds: its slot in the limits, its running subscriptions, its idle timer. */
interface SocketState {
  slot: LiveSlot;
  running: Set<string>;
  idle: NodeJS.Timeout | null;
}

export function attachGraphqlWs(server: Server, yoga: YogaServerInstance<ServerContext, GraphQLContext>, options: GraphqlWsOptions) {
  const wss = new WebSocketServer({ server, path: options.path });
  const states = new WeakMap<object, SocketState>();
  const { maxSubscriptionsPerConnection } = options.limits.options;
  const idleFrom = (socket: WebSocket, state: SocketState) => {
    if (state.idle) clearTimeout(state.idle);
    state.idle = setTimeout(() => socket.close(1000, 'Idle: no subscription was running'), options.idleTimeoutMs);
    state.idle.unref();
  };
  // Before the protocol starts: a client address over its limit is closed at once (every limit applies to
  // anonymous callers too).
  wss.on('connection', (socket, request) => {
    const slot = options.limits.open(request.socket.remoteAddress ?? 'unknown');
    if (!slot) {
      socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections from this address');
      return;
    }
    const state: SocketState = { slot, running: new Set(), idle: null };
    states.set(socket, state);
    socket.once('close', () => {
      if (state.idle) clearTimeout(state.idle);
      slot.release();
    });
  });
  const disposable = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: options.connectionInitWaitTimeoutMs ?? 3_000,
      // A token that is sent must be valid: the connection is refused (4403) before any operation.
      onConnect: async (ctx) => {
        const state = states.get(ctx.extra.socket);
        if (!state) return false;
        const authorization = authorizationOf(ctx.connectionParams);
        if (authorization !== undefined) {
          let company: { id: string } | null;
          try {
            company = await options.caller(authorization);
          } catch {
            return false;
          }
          if (company && !state.slot.forMerchant(company.id)) {
            ctx.extra.socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections for this merchant');
            return false;
          }
        }
        // Idle counts from the accepted init; before it, the init timeout applies.
        idleFrom(ctx.extra.socket, state);
        return true;
      },
      onComplete: (ctx, id) => {
        const state = states.get(ctx.extra.socket);
        if (!state) return;
        state.running.delete(id);
        if (state.running.size === 0) idleFrom(ctx.extra.socket, state);
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onSubscribe: async (ctx, id, payload) => {
        const state = states.get(ctx.extra.socket);
        if (!state) return [new GraphQLError('The connection is closing')];
        if (state.running.size >= maxSubscriptionsPerConnection) {
          const error = tooManySubscriptions(maxSubscriptionsPerConnection);
          return [new GraphQLError(error.message, { extensions: { code: error.code, details: [] } })];
        }
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
        state.running.add(id);
        if (state.idle) clearTimeout(state.idle);
        state.idle = null;
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
