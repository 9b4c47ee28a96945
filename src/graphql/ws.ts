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
  caller: (authorization: string | undefined) => Promise<{ id: string } | null>;
  maxConnectionsPerIp: number;
  maxConnectionsPerMerchant: number;
  maxSubscriptionsPerConnection: number;
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

/** Closed with this code when a client address or merchant holds too many connections. */
export const TOO_MANY_CONNECTIONS = 4429;

/** Counts per key (client address, merchant) of what is open now. */
class Counter {
  private readonly counts = new Map<string, number>();
  /** Takes one for `key` unless `max` are taken; answers whether it did. */
  take(key: string, max: number): boolean {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return false;
    this.counts.set(key, n + 1);
    return true;
  }
  give(key: string): void {
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }
}

export function attachGraphqlWs(server: Server, yoga: YogaServerInstance<ServerContext, GraphQLContext>, options: GraphqlWsOptions) {
  const wss = new WebSocketServer({ server, path: options.path });
  const perIp = new Counter();
  const perMerchant = new Counter();
  const merchantOf = new WeakMap<object, string>();
  const subscriptionsOf = new WeakMap<object, Set<string>>();
  // Before the protocol starts: a client address over its limit is closed at once (every limit applies to
  // anonymous callers too).
  wss.on('connection', (socket, request) => {
    const ip = request.socket.remoteAddress ?? 'unknown';
    if (!perIp.take(ip, options.maxConnectionsPerIp)) {
      socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections from this address');
      return;
    }
    socket.once('close', () => {
      perIp.give(ip);
      const merchant = merchantOf.get(socket);
      if (merchant) perMerchant.give(merchant);
    });
  });
  const disposable = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: options.connectionInitWaitTimeoutMs ?? 3_000,
      // A token that is sent must be valid: the connection is refused (4403) before any operation.
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.connectionParams);
        if (authorization === undefined) return true;
        let company: { id: string } | null;
        try {
          company = await options.caller(authorization);
        } catch {
          return false;
        }
        if (company) {
          if (!perMerchant.take(company.id, options.maxConnectionsPerMerchant)) {
            ctx.extra.socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections for this merchant');
            return false;
          }
          merchantOf.set(ctx.extra.socket, company.id);
        }
        return true;
      },
      onComplete: (ctx, id) => {
        subscriptionsOf.get(ctx.extra.socket)?.delete(id);
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onSubscribe: async (ctx, id, payload) => {
        let running = subscriptionsOf.get(ctx.extra.socket);
        if (!running) subscriptionsOf.set(ctx.extra.socket, (running = new Set()));
        if (running.size >= options.maxSubscriptionsPerConnection) {
          return [
            new GraphQLError(`At most ${options.maxSubscriptionsPerConnection} subscriptions may run on one connection; complete one first`, {
              extensions: { code: 'VALIDATION_FAILED', details: [] },
            }),
          ];
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
        running.add(id);
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
