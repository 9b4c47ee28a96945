// Live clients for the black-box tests: a graphql-ws socket driven message by message (so a test can send a burst
// of subscribes or watch the close code), an SSE reader as a browser's fetch would read it, and the server's count
// of open live connections from /metrics.
import WebSocket from 'ws';
import { parsePrometheus, sampleValue } from './prometheus.ts';

/** Waits for `check` to hold, looking every 20 ms; throws after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface OperationError {
  message: string;
  extensions?: { code?: string };
}

export interface LiveSocket {
  /** 'ack' once the server accepted the connection, or the close code when it closed it first. */
  accepted: Promise<'ack' | number>;
  /** The close, once it happened. */
  closedWith: { code: number; reason: string } | null;
  closed: Promise<{ code: number; reason: string }>;
  /** `next` payloads per operation id. */
  nexts: Map<string, { data?: unknown; errors?: OperationError[] }[]>;
  /** `error` payloads per operation id. */
  errors: Map<string, OperationError[]>;
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
  complete(id: string): void;
  close(): void;
}

/** A graphql-transport-ws connection to `baseUrl`'s /graphql, initialised with `token` when given. */
export function liveSocket(baseUrl: string, options: { token?: string; headers?: Record<string, string> } = {}): LiveSocket {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: options.headers });
  const nexts = new Map<string, { data?: unknown; errors?: OperationError[] }[]>();
  const errors = new Map<string, OperationError[]>();
  let acknowledge: (v: 'ack' | number) => void = () => {};
  const live: LiveSocket = {
    accepted: new Promise((resolve) => (acknowledge = resolve)),
    closedWith: null,
    closed: new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        live.closedWith = { code, reason: String(reason) };
        acknowledge(code);
        resolve(live.closedWith);
      }),
    ),
    nexts,
    errors,
    subscribe: (id, query, variables = {}) => socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } })),
    complete: (id) => socket.send(JSON.stringify({ id, type: 'complete' })),
    close: () => socket.close(),
  };
  socket.on('error', () => undefined);
  socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: options.token ? { authorization: `Bearer ${options.token}` } : {} })));
  socket.on('message', (raw) => {
    const message = JSON.parse(String(raw)) as { type: string; id?: string; payload?: unknown };
    if (message.type === 'connection_ack') acknowledge('ack');
    else if (message.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
    else if (message.type === 'next') nexts.set(message.id!, [...(nexts.get(message.id!) ?? []), message.payload as { data?: unknown }]);
    else if (message.type === 'error') errors.set(message.id!, message.payload as OperationError[]);
  });
  return live;
}

export interface SseStream {
  status: number;
  /** The JSON error answer of a refused stream. */
  refusal: { error?: { code?: string; message?: string } } | null;
  /** The payloads of its `next` events. */
  messages: { data?: unknown; errors?: OperationError[] }[];
  /** Whether the server sent `complete` (a clean end). */
  completed: boolean;
  /** Resolves once the stream ended, whoever ended it. */
  ended: Promise<void>;
  endedAt: number | null;
  close(): void;
}

/** A GraphQL operation over server-sent events (POST, `Accept: text/event-stream`), read in the background. */
export async function sseStream(
  baseUrl: string,
  options: { query: string; variables?: Record<string, unknown>; token?: string; headers?: Record<string, string> },
): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ query: options.query, variables: options.variables ?? {} }),
    signal: controller.signal,
  });
  const stream: SseStream = { status: res.status, refusal: null, messages: [], completed: false, ended: Promise.resolve(), endedAt: null, close: () => controller.abort() };
  if (res.headers.get('content-type')?.includes('json')) {
    stream.refusal = (await res.json()) as SseStream['refusal'];
    stream.endedAt = Date.now();
    return stream;
  }
  stream.ended = (async () => {
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString('utf8');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, cut).split('\n');
          buffer = buffer.slice(cut + 2);
          const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim();
          const data = lines.find((l) => l.startsWith('data:'))?.slice(5).trim();
          if (event === 'complete') stream.completed = true;
          else if (event === 'next' && data) stream.messages.push(JSON.parse(data) as SseStream['messages'][number]);
        }
      }
    } catch {
      // aborted or cut off: ended all the same
    }
    stream.endedAt = Date.now();
  })();
  return stream;
}

/** Open live connections of a server by transport, from its /metrics (the server needs METRICS_TOKEN). */
export async function liveConnections(baseUrl: string, metricsToken: string): Promise<{ ws: number; sse: number }> {
  const res = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  const families = parsePrometheus(await res.text());
  return {
    ws: sampleValue(families, 'payrail_live_connections', { transport: 'graphql_ws' }) ?? NaN,
    sse: sampleValue(families, 'payrail_live_connections', { transport: 'sse' }) ?? NaN,
  };
}

/** Waits until the server holds no live connection (every slot given back). */
export async function untilNoLiveConnections(baseUrl: string, metricsToken: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const open = await liveConnections(baseUrl, metricsToken);
    if (open.ws === 0 && open.sse === 0) return;
    if (Date.now() > end) throw new Error(`live connections still open after ${timeoutMs} ms: ${JSON.stringify(open)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
