// GraphQL over WebSocket (the graphql-transport-ws protocol of graphql-ws, on the `ws` package) on the same port and
// path as Yoga. Operations run through Yoga's envelop, so they meet the same limits, input checks, context and
// error masking as HTTP. The merchant token travels in connectionParams: {"authorization": "Bearer <token>"}.
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { YogaServerInstance } from 'graphql-yoga';
import { CloseCode, handleProtocols, makeServer, type SubscribePayload } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../logger.ts';
import { randomUUID } from 'node:crypto';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { clientError } from '../http/edge.ts';
import { findInputProblem, textProblem, utf8Text } from '../http/input-guard.ts';
import { stripSuggestions } from './limits.ts';
import type { GraphQLContext } from './builder.ts';
import { tooManySubscriptions, type LiveLimits, type LiveSlot } from './live-limits.ts';
import type { LiveSessions } from './live-sessions.ts';
import type { Credential } from '../core/auth.ts';
import type { ServerContext } from './yoga.ts';

export interface GraphqlWsOptions {
  path: string;
  /** The caller behind a token and the credential it used; throws on a bad token (the connection is refused with 4403). */
  authenticate: (authorization: string | undefined, req: IncomingMessage) => Promise<{ company: { id: string }; credential: Credential } | null>;
  /** Follows authenticated connections, so that one whose credential stops being valid is closed (4403). */
  sessions: LiveSessions;
  /** Shared with the SSE streams: connections per client address and per merchant, subscriptions per connection. */
  limits: LiveLimits;
  /** Milliseconds a client has to send connection_init. */
  connectionInitWaitTimeoutMs?: number;
  /** Ping interval; a client that stops answering is dropped. */
  keepAliveMs?: number;
  /** A connection with no subscription running for this long is closed (1000), so idle sockets free their slot. */
  idleTimeoutMs: number;
  /** Largest message a client may send (the HTTP body limit). */
  maxPayloadBytes: number;
  /** Introspection is off: no "Did you mean ...?" in error messages either (as over HTTP). */
  hideSuggestions: boolean;
  /** The client's address, as the per-address limits count it (behind trusted proxies: the forwarded one). */
  clientAddress: (request: IncomingMessage) => string;
  logger: Logger;
}

/**
 * A client that reads slower than it is sent to: past this many bytes waiting in its socket it is closed with
 * 1013 (try again later) and resumes with `after`, instead of the server holding its backlog in memory.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Under load, writes wait at most this long to leave together with the next ones. */
const BATCH_WINDOW_MS = 5;

/**
 * Gathers the writes to each socket into as few system calls as it can: a write to a quiet server leaves at the end
 * of the current turn of the event loop; while writes keep coming (a flush happened less than BATCH_WINDOW_MS ago)
 * they wait for the window to end, so a burst of changes costs each client one write per window instead of one per
 * message (a Nagle-like trade of at most BATCH_WINDOW_MS of latency). `_socket` is ws's underlying net.Socket.
 */
class WriteBatcher {
  private readonly corked = new Set<Socket>();
  private scheduled = false;
  private lastFlush = 0;

  hold(socket: WebSocket): void {
    const raw = (socket as unknown as { _socket?: Socket })._socket;
    if (!raw) return;
    if (!this.corked.has(raw)) {
      this.corked.add(raw);
      raw.cork();
    }
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.lastFlush + BATCH_WINDOW_MS - performance.now();
    if (wait <= 0) setImmediate(() => this.flush());
    else setTimeout(() => this.flush(), wait).unref();
  }

  private flush(): void {
    this.scheduled = false;
    this.lastFlush = performance.now();
    const sockets = [...this.corked];
    this.corked.clear();
    for (const raw of sockets) raw.uncork();
  }
}

/** An operation's failure as the client sees it: a GraphQL error with a code, never an internal message. */
function operationError(e: unknown): GraphQLError {
  if (e instanceof GraphQLError) {
    const code = e.extensions['code'] ?? (/^Syntax Error/.test(e.message) ? 'GRAPHQL_PARSE_FAILED' : 'VALIDATION_FAILED');
    return new GraphQLError(e.message, { extensions: { ...e.extensions, code } });
  }
  const error = clientError(e, () => {});
  return new GraphQLError(error.code === 'INTERNAL' ? 'Unexpected error' : error.message, { extensions: { code: error.code } });
}

const authorizationOf = (params: Record<string, unknown> | undefined): string | undefined => {
  const value = params?.['authorization'] ?? params?.['Authorization'];
  return typeof value === 'string' ? value : undefined;
};

type Enveloped = ReturnType<YogaServerInstance<ServerContext, GraphQLContext>['getEnveloped']>;

/** Closed with this code (RFC 6455 "invalid frame payload data") when a message is not valid UTF-8. */
export const INVALID_FRAME_PAYLOAD = 1007;

/** Closed with this code when a client address or merchant holds too many connections. */
export const TOO_MANY_CONNECTIONS = 4429;

/** Closed with this code (graphql-ws's Forbidden) when the credential the connection authenticated with stops holding. */
export const CREDENTIAL_REVOKED = CloseCode.Forbidden;

/** What one socket holds: its slot in the limits, its operations (each with its release), its idle timer. */
interface SocketState {
  slot: LiveSlot;
  running: Map<string, () => void>;
  idle: NodeJS.Timeout | null;
  /** Stops following its credential (set once the connection authenticated with one). */
  untrack: (() => void) | null;
  closed: boolean;
}

/** Closes a socket; one that does not even read the close frame is cut off a second later. */
function closeFirmly(socket: WebSocket, code: number, reason: string): void {
  socket.close(code, reason);
  setTimeout(() => socket.terminate(), 1_000).unref();
}

export function attachGraphqlWs(server: Server, yoga: YogaServerInstance<ServerContext, GraphQLContext>, options: GraphqlWsOptions) {
  // UTF-8 is checked below, for text and binary frames alike (ws would check only text frames, and close with no reason).
  const wss = new WebSocketServer({ server, path: options.path, handleProtocols, maxPayload: options.maxPayloadBytes, skipUTF8Validation: true });
  const batcher = new WriteBatcher();
  const keepAliveMs = options.keepAliveMs ?? 12_000;
  const states = new WeakMap<object, SocketState>();
  const { maxSubscriptionsPerConnection } = options.limits.options;
  const visible = (errors: GraphQLError[]) => {
    if (options.hideSuggestions) stripSuggestions(errors);
    return errors;
  };
  const idleFrom = (socket: WebSocket, state: SocketState) => {
    if (state.closed) return;
    if (state.idle) clearTimeout(state.idle);
    state.idle = setTimeout(() => socket.close(1000, 'Idle: no subscription was running'), options.idleTimeoutMs);
    state.idle.unref();
  };
  let connections = 0;
  /**
   * Takes one of the connection's operation slots for `id` now, before anything is awaited, so a burst of subscribe
   * messages cannot all pass the check; null when the connection runs its maximum. The answer releases the slot,
   * once (completion, a refusal, the socket closing: whichever comes first).
   */
  const reserve = (socket: WebSocket, state: SocketState, id: string): (() => void) | null => {
    if (state.running.size >= maxSubscriptionsPerConnection) return null;
    const release = () => {
      if (state.running.get(id) !== release) return;
      state.running.delete(id);
      // Idle again once the last running operation ends; a refused one leaves the idle timer as it was.
      if (state.running.size === 0 && state.idle === null) idleFrom(socket, state);
    };
    state.running.set(id, release);
    return release;
  };
  /** An operation runs: the connection is not idle. */
  const busy = (state: SocketState) => {
    if (state.idle) clearTimeout(state.idle);
    state.idle = null;
  };
  const protocol = makeServer<Record<string, unknown>, { socket: WebSocket; request: IncomingMessage }>({
    connectionInitWaitTimeout: options.connectionInitWaitTimeoutMs ?? 3_000,
    // A token that is sent must be valid: the connection is refused (4403) before any operation.
    onConnect: async (ctx) => {
      const state = states.get(ctx.extra.socket);
      if (!state) return false;
      const authorization = authorizationOf(ctx.connectionParams);
      if (authorization !== undefined) {
        const since = options.sessions.mark();
        let found: { company: { id: string }; credential: Credential } | null;
        try {
          found = await options.authenticate(authorization, ctx.extra.request);
        } catch {
          return false;
        }
        // The client left while its token was looked up: nothing to count or follow.
        if (state.closed) return false;
        if (found) {
          if (!state.slot.forMerchant(found.company.id)) {
            ctx.extra.socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections for this merchant');
            return false;
          }
          const socket = ctx.extra.socket;
          state.untrack = options.sessions.track(
            found.credential,
            () => closeFirmly(socket, CREDENTIAL_REVOKED, 'Forbidden: the token of this connection was rotated or revoked'),
            since,
          );
        }
      }
      // Idle counts from the accepted init; before it, the init timeout applies.
      idleFrom(ctx.extra.socket, state);
      return true;
    },
    onComplete: (ctx, id) => {
      states.get(ctx.extra.socket)?.running.get(id)?.();
    },
    execute: (args) => (args.rootValue as Enveloped).execute(args),
    subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
    onSubscribe: async (ctx, id, payload) => {
      const state = states.get(ctx.extra.socket);
      if (!state) return [new GraphQLError('The connection is closing')];
      const release = reserve(ctx.extra.socket, state, id);
      if (!release) {
        const error = tooManySubscriptions(maxSubscriptionsPerConnection);
        return [new GraphQLError(error.message, { extensions: { code: error.code, details: [] } })];
      }
      // A refused operation gives its slot back here; graphql-ws calls onComplete only for one that ran.
      try {
        const prepared = await prepare(ctx, payload);
        if (Array.isArray(prepared)) release();
        else busy(state);
        return prepared;
      } catch (e) {
        release();
        throw e;
      }
    },
    onError: (_ctx, _id, _payload, errors) => visible([...errors]),
    onNext: (_ctx, _id, _payload, _args, result) => {
      if (options.hideSuggestions && 'errors' in result) stripSuggestions(result.errors);
      return result;
    },
  });
  /** An operation's execution arguments through Yoga's envelop, or the errors that refuse it. */
  async function prepare(
    ctx: { connectionParams?: Readonly<Record<string, unknown>>; extra: { request: IncomingMessage } },
    payload: SubscribePayload,
  ): Promise<ExecutionArgs | GraphQLError[]> {
    // The edge check HTTP requests get (NUL, unpaired surrogates, nesting), for the document and variables.
    const textIssue = textProblem(payload.query);
    const problem = textIssue
      ? { path: 'query', message: textIssue }
      : (findInputProblem(payload.variables ?? null, ['variables']) ?? findInputProblem(payload.operationName ?? null, ['operationName']));
    if (problem) return [new GraphQLError(`${problem.path} ${problem.message}`, { extensions: { code: 'VALIDATION_FAILED', details: [problem] } })];
    const authorization = authorizationOf(ctx.connectionParams);
    // Yoga's context factory reads the Authorization header of a Fetch request: give it the token that way.
    const request = new Request('http://localhost/graphql', { method: 'POST', headers: authorization ? { authorization } : {} });
    const enveloped = yoga.getEnveloped({ request, req: ctx.extra.request, requestId: randomUUID(), params: payload } as never);
    let args: ExecutionArgs;
    try {
      const document = enveloped.parse(payload.query);
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length) return visible([...errors]);
      args = {
        schema: enveloped.schema,
        operationName: payload.operationName,
        document,
        variableValues: payload.variables,
        contextValue: await enveloped.contextFactory(),
        rootValue: enveloped,
      };
    } catch (e) {
      // A document that does not parse, or past the token limit, or a token revoked since the connection opened:
      // an error for this operation, not the end of the connection and its other subscriptions.
      return visible([operationError(e)]);
    }
    return args;
  }
  // Before the protocol starts: a client address over its limit is closed at once (every limit applies to
  // anonymous callers too).
  wss.on('connection', (socket, request) => {
    const slot = options.limits.open(options.clientAddress(request));
    if (!slot) {
      socket.close(TOO_MANY_CONNECTIONS, 'Too many live connections from this address');
      return;
    }
    const state: SocketState = { slot, running: new Map(), idle: null, untrack: null, closed: false };
    states.set(socket, state);
    connections++;
    // Keep-alive: a client that does not answer a ping before the next one is dropped.
    let alive = true;
    socket.on('pong', () => (alive = true));
    const pinger = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, keepAliveMs);
    pinger.unref();
    socket.on('error', (e) => {
      options.logger.warn({ err: e }, 'live connection failed');
      socket.terminate();
    });
    const closed = protocol.opened(
      {
        protocol: socket.protocol,
        // Not waiting for each write: the next messages go out in the same system call (WriteBatcher); a client
        // too slow for its messages is closed instead of buffered without end.
        send: (data) => {
          if (socket.readyState !== socket.OPEN) return;
          batcher.hold(socket);
          socket.send(data);
          // A client that does not even read the close frame is cut off, and its subscriptions with it.
          if (socket.bufferedAmount > MAX_BUFFERED_BYTES) closeFirmly(socket, 1013, 'Reading too slowly: reconnect and resume with after');
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data) => {
            if (socket.readyState !== socket.OPEN) return;
            let text: string;
            try {
              text = utf8Text(Array.isArray(data) ? Buffer.concat(data) : new Uint8Array(data), 'The message');
            } catch (e) {
              // RFC 6455's answer to a message that is not UTF-8; the reason says which check failed.
              socket.close(INVALID_FRAME_PAYLOAD, (e as Error).message);
              return;
            }
            handle(text).catch((e: unknown) => {
              options.logger.error({ err: e }, 'live message handling failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
      },
      { socket, request },
    );
    socket.once('close', (code, reason) => {
      connections--;
      state.closed = true;
      clearInterval(pinger);
      if (state.idle) clearTimeout(state.idle);
      // Every operation's slot goes with the socket; their late completions release nothing twice.
      state.running.clear();
      state.untrack?.();
      slot.release();
      void closed(code, String(reason));
    });
  });
  return {
    /** Open graphql-ws connections (metrics). */
    get connections(): number {
      return connections;
    },
    /** Closes every socket (1001 going away) and the server. */
    async close(): Promise<void> {
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
