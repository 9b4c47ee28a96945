// Limits of live connections: per client address, per merchant, subscriptions per connection, the init timeout.
import { createClient, type Client } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useServer, type TestServer } from '../support/server.ts';

const EVENTS = 'subscription { invoiceEvents { id } }';

const url = (server: TestServer) => server.url.replace(/^http/, 'ws') + '/graphql';

function client(server: TestServer, token?: string): Client {
  return createClient({ url: url(server), webSocketImpl: WebSocket, connectionParams: token ? { authorization: `Bearer ${token}` } : {}, retryAttempts: 0, lazy: true });
}

/** Subscribes and answers how it ended within `ms`: a close code, an error message, or 'open'. */
function outcome(c: Client, ms = 1_500): Promise<string | number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    c.subscribe(
      { query: EVENTS },
      {
        next: (r) => {
          if (r.errors) {
            clearTimeout(timer);
            resolve(String(r.errors[0]?.message));
          }
        },
        error: (e) => {
          clearTimeout(timer);
          // A close event carries a code; refused operations arrive as a list of GraphQL errors.
          resolve(Array.isArray(e) ? String((e[0] as { message?: string }).message) : ((e as { code?: number }).code ?? String(e)));
        },
        complete: () => undefined,
      },
    );
  });
}

/** Opens an SSE subscription; answers its status and, when refused, the error body, else a way to close it. */
async function sseStream(server: TestServer, token?: string, invoiceId?: string) {
  const controller = new AbortController();
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: token ? EVENTS : 'subscription($id: ID!) { invoiceStatusChanged(id: $id) { id } }', variables: token ? {} : { id: invoiceId } }),
    signal: controller.signal,
  });
  if (res.headers.get('content-type')?.includes('json')) {
    return { status: res.status, body: (await res.json()) as { error?: { code?: string; message?: string } }, close: () => {} };
  }
  // Keep reading the open stream in the background until it is closed.
  void (async () => {
    for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>);
  })().catch(() => undefined);
  return { status: res.status, body: null, close: () => controller.abort() };
}

describe('live connection limits', () => {
  const server = useServer('pglite', {
    LIVE_MAX_CONNECTIONS_PER_IP: '3',
    LIVE_MAX_CONNECTIONS_PER_MERCHANT: '1',
    LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: '1',
    LIVE_IDLE_TIMEOUT_MS: '1500',
  });
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
    await new Promise((r) => setTimeout(r, 200));
  });

  it('refuses a second connection of one merchant and a second subscription on one connection', async () => {
    const m = await server.merchant();
    const first = client(server, m.publicToken);
    clients.push(first);
    expect(await outcome(first)).toBe('open');
    const second = client(server, m.publicToken);
    clients.push(second);
    expect(await outcome(second)).toBe(4429);
    // One connection, a second subscription: a clear error for the new one; the first keeps running.
    expect(await outcome(first)).toBe('At most 1 subscriptions may run on one connection; complete one first');
  });

  it('refuses connections past the per-address limit, anonymous ones included', async () => {
    // Three anonymous, initialised connections held open.
    const open = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<WebSocket>((resolve) => {
            const socket = new WebSocket(url(server), 'graphql-transport-ws');
            socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
            socket.on('message', (data) => {
              if (JSON.parse(String(data)).type === 'connection_ack') resolve(socket);
            });
          }),
      ),
    );
    const extra = client(server);
    clients.push(extra);
    expect(await outcome(extra)).toBe(4429);
    for (const socket of open) socket.close();
  });

  it('SSE streams count against the same limits as WebSockets: a clear 429 past them, the slot back once closed', async () => {
    const m = await server.merchant();
    const ws = client(server, m.publicToken);
    clients.push(ws);
    expect(await outcome(ws)).toBe('open');
    // The merchant holds its one connection: an SSE stream of the same merchant is refused.
    const refused = await sseStream(server, m.publicToken);
    expect(refused.status).toBe(429);
    expect(refused.body?.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('merchant') });
    await ws.dispose();
    await new Promise((r) => setTimeout(r, 200));
    const admitted = await sseStream(server, m.publicToken);
    expect(admitted.status).toBe(200);
    // Per address: two more anonymous streams (following one invoice) fill the three slots; the fourth is refused.
    const invoiceId = (await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } })).body.id as string;
    const more = [await sseStream(server, undefined, invoiceId), await sseStream(server, undefined, invoiceId)];
    expect(more.map((s) => s.status)).toEqual([200, 200]);
    const fourth = await sseStream(server, undefined, invoiceId);
    expect(fourth.status).toBe(429);
    expect(fourth.body?.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('address') });
    const wsOverLimit = client(server);
    clients.push(wsOverLimit);
    expect(await outcome(wsOverLimit)).toBe(4429);
    for (const s of [admitted, ...more]) s.close();
    await new Promise((r) => setTimeout(r, 200));
    const again = await sseStream(server, undefined, invoiceId);
    expect(again.status).toBe(200);
    again.close();
  });

  it('closes a connection idle past LIVE_IDLE_TIMEOUT_MS (1000), not one with a subscription running', async () => {
    const m = await server.merchant();
    const busy = client(server, m.publicToken);
    clients.push(busy);
    expect(await outcome(busy)).toBe('open');
    const idle = new WebSocket(url(server), 'graphql-transport-ws');
    const closed = new Promise<{ code: number; reason: string }>((resolve) => idle.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    idle.on('open', () => idle.send(JSON.stringify({ type: 'connection_init' })));
    const started = Date.now();
    expect(await closed).toEqual({ code: 1000, reason: 'Idle: no subscription was running' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    // The busy connection outlived the idle timeout and still takes events.
    await new Promise((r) => setTimeout(r, 500));
    expect(await outcome(busy, 300)).toBe('At most 1 subscriptions may run on one connection; complete one first');
  });

  it('closes a connection that never initialises (4408)', async () => {
    const socket = new WebSocket(url(server), 'graphql-transport-ws');
    const code = await new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
    expect(code).toBe(4408);
  });
});

describe('live connections at shutdown', () => {
  const server = useServer('pglite', { SHUTDOWN_TIMEOUT_MS: '20000' });

  it('closes WebSockets with 1001 and ends SSE streams at once, without waiting for the drain', async () => {
    const m = await server.merchant();
    const socket = new WebSocket(url(server), 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${m.publicToken}` } })));
      socket.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_ack') {
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: EVENTS } }));
          resolve();
        }
      });
    });
    const stream = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${m.publicToken}` },
      body: JSON.stringify({ query: EVENTS }),
    });
    expect(stream.status).toBe(200);
    const streamEnded = (async () => {
      try {
        for await (const _ of stream.body as unknown as AsyncIterable<Uint8Array>);
      } catch {
        // cut off: ended all the same
      }
    })();
    const started = Date.now();
    await server.app.stop();
    expect(await closed).toBe(1001);
    await streamEnded;
    // The drain would have waited up to 60% of SHUTDOWN_TIMEOUT_MS (12 s) for an open stream.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
