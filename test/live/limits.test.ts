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

describe('live connection limits', () => {
  const server = useServer('pglite', { LIVE_MAX_CONNECTIONS_PER_IP: '3', LIVE_MAX_CONNECTIONS_PER_MERCHANT: '1', LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: '1' });
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

  it('closes a connection that never initialises (4408)', async () => {
    const socket = new WebSocket(url(server), 'graphql-transport-ws');
    const code = await new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
    expect(code).toBe(4408);
  });
});
