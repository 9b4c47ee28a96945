// Live subscribers (docs/live.md) that drop their connection now and then and resume with `after` = the last
// cursor they got, over graphql-ws or SSE, through the proxy (so each reconnection may land on another instance,
// and a killed instance drops them too). Each keeps every cursor it received, per connection.
import WebSocket from 'ws';
import type { Rng } from './rng.ts';

export type Transport = 'ws' | 'sse';

const QUERY = 'subscription($after: String) { invoiceEvents(after: $after) { id status } }';

export interface Subscriber {
  label: string;
  tenantId: string;
  transport: Transport;
  /** Cursors per connection, in arrival order. */
  connections: string[][];
  resumes: number;
  errors: string[];
  last: string | null;
  stop(): Promise<void>;
}

export function startSubscriber(options: { label: string; tenantId: string; token: string; baseUrl: string; transport: Transport; rng: Rng }): Subscriber {
  const { rng } = options;
  let stopped = false;
  let current: { close(): void; done: Promise<void> } | null = null;
  const sub: Subscriber = {
    label: options.label,
    tenantId: options.tenantId,
    transport: options.transport,
    connections: [],
    resumes: 0,
    errors: [],
    last: null,
    async stop() {
      stopped = true;
      current?.close();
      await loop;
    },
  };
  const received = (cursors: string[], payload: { data?: unknown; errors?: { message: string }[]; extensions?: { cursor?: string } }) => {
    if (payload.errors?.length) {
      sub.errors.push(payload.errors.map((e) => e.message).join('; '));
      return false;
    }
    const cursor = payload.extensions?.cursor;
    if (typeof cursor !== 'string') {
      sub.errors.push(`a message without extensions.cursor: ${JSON.stringify(payload).slice(0, 200)}`);
      return false;
    }
    cursors.push(cursor);
    sub.last = cursor;
    return true;
  };

  const connect = (cursors: string[]) => (options.transport === 'ws' ? wsConnection(cursors) : sseConnection(cursors));

  function wsConnection(cursors: string[]): { close(): void; done: Promise<void> } {
    const socket = new WebSocket(`${options.baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const done = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${options.token}` } })));
    socket.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as { type: string; payload?: unknown };
      if (m.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY, variables: { after: sub.last } } }));
      } else if (m.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
      else if (m.type === 'next') {
        if (!received(cursors, m.payload as never)) socket.close();
      } else if (m.type === 'error' || m.type === 'complete') {
        if (m.type === 'error') sub.errors.push(JSON.stringify(m.payload).slice(0, 300));
        socket.close();
      }
    });
    return { close: () => socket.close(), done };
  }

  function sseConnection(cursors: string[]): { close(): void; done: Promise<void> } {
    const controller = new AbortController();
    const done = (async () => {
      try {
        const res = await fetch(`${options.baseUrl}/graphql`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
          body: JSON.stringify({ query: QUERY, variables: { after: sub.last } }),
          signal: controller.signal,
        });
        if (!res.headers.get('content-type')?.includes('text/event-stream')) {
          sub.errors.push(`SSE refused: ${res.status} ${(await res.text()).slice(0, 200)}`);
          return;
        }
        let buffer = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += Buffer.from(chunk).toString('utf8');
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const lines = buffer.slice(0, cut).split('\n');
            buffer = buffer.slice(cut + 2);
            const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim();
            const data = lines.find((l) => l.startsWith('data:'))?.slice(5).trim();
            if (event === 'next' && data && !received(cursors, JSON.parse(data) as never)) return controller.abort();
            if (event === 'complete') return;
          }
        }
      } catch {
        // aborted, or the instance went away: resume
      }
    })();
    return { close: () => controller.abort(), done };
  }

  const loop = (async () => {
    while (!stopped) {
      if (sub.connections.length > 0) sub.resumes++;
      const cursors: string[] = [];
      sub.connections.push(cursors);
      const connection = connect(cursors);
      current = connection;
      // A drop of our own now and then; a killed instance drops it earlier.
      const dropAfter = rng.int(1_500, 6_000);
      const timer = setTimeout(() => connection.close(), dropAfter);
      await connection.done;
      clearTimeout(timer);
      if (!stopped) await new Promise((r) => setTimeout(r, rng.int(50, 400)));
    }
  })();
  return sub;
}
