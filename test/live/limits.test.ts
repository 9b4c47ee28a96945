// Limits of live connections: per client address, per merchant, subscriptions per connection (under bursts too), the
// idle and init timeouts, shutdown. Every wait is on a condition: an operation counts as running once it delivered
// an event, a slot as given back once the server's /metrics shows no live connection.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { liveSocket, sseStream, until, untilNoLiveConnections, type LiveSocket, type SseStream } from '../support/live.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const EVENTS = 'subscription { invoiceEvents { id } }';
const STATUS = 'subscription($id: ID!) { invoiceStatusChanged(id: $id) { id } }';
const METRICS_TOKEN = 'live-limits-metrics-token-0123456789';

const newInvoice = async (server: TestServer, token: string) =>
  (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } })).body.id as string;

/** Operation ids of `socket` that delivered an event or were refused. */
const answered = (socket: LiveSocket) => new Set([...socket.nexts.keys(), ...socket.errors.keys()]);

/**
 * Makes invoices of the merchant until every one of `ids` on `socket` has answered: an event (it runs) or an error
 * (it was refused). The positive signal that the server has handled them all.
 */
async function untilAnswered(server: TestServer, token: string, socket: LiveSocket, ids: string[], timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  const done = () => ids.every((id) => answered(socket).has(id));
  while (!done()) {
    if (Date.now() > end) throw new Error(`only ${ids.filter((id) => answered(socket).has(id)).length} of ${ids.length} operations answered`);
    await newInvoice(server, token);
    await until(done, 500).catch(() => undefined);
  }
}

/** An accepted connection with one running invoiceEvents subscription, proven by its first event. */
async function running(server: TestServer, token: string, id = 'events'): Promise<LiveSocket> {
  const socket = liveSocket(server.url, { token });
  expect(await socket.accepted).toBe('ack');
  socket.subscribe(id, EVENTS);
  await untilAnswered(server, token, socket, [id]);
  expect(socket.errors.get(id)).toBeUndefined();
  return socket;
}

/** The socket's subscription `id` delivers the next invoice of the merchant: it still runs. */
async function stillRunning(server: TestServer, token: string, socket: LiveSocket, id = 'events'): Promise<void> {
  const invoice = await newInvoice(server, token);
  await until(() => (socket.nexts.get(id) ?? []).some((n) => (n.data as { invoiceEvents?: { id: string } })?.invoiceEvents?.id === invoice), 10_000, `${id} to deliver ${invoice}`);
}

describe('live connection limits', () => {
  const server = useServer('pglite', {
    LIVE_MAX_CONNECTIONS_PER_IP: '3',
    LIVE_MAX_CONNECTIONS_PER_MERCHANT: '1',
    LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: '1',
    LIVE_IDLE_TIMEOUT_MS: '1500',
    METRICS_TOKEN,
  });
  const opened: { close(): void }[] = [];
  const track = <T extends LiveSocket | SseStream>(c: T): T => (opened.push(c), c);
  afterEach(async () => {
    for (const c of opened.splice(0)) c.close();
    // Every test starts with all slots free.
    await untilNoLiveConnections(server.url, METRICS_TOKEN);
  });

  it('refuses a second connection of one merchant and a second subscription on one connection; a refused or finished operation gives its slot back', async () => {
    const m = await server.merchant();
    const first = track(await running(server, m.publicToken));
    const second = track(liveSocket(server.url, { token: m.publicToken }));
    expect(await second.accepted).toBe(4429);
    // One connection, a second subscription: a clear error for the new one; the first keeps running.
    first.subscribe('second', EVENTS);
    await until(() => first.errors.has('second'));
    expect(first.errors.get('second')).toEqual([
      { message: 'At most 1 subscriptions may run on one connection; complete one first', extensions: { code: 'RATE_LIMITED', details: [] } },
    ]);
    await stillRunning(server, m.publicToken, first);

    // Completed, refused (a document that does not parse) and finished (a query) operations each give the one slot back.
    first.complete('events');
    const runs = async (id: string) => {
      first.subscribe(id, EVENTS);
      await untilAnswered(server, m.publicToken, first, [id]);
      return !first.errors.has(id);
    };
    // The completion is handled in the background: the slot is back once a new subscription runs.
    let attempt = 0;
    while (!(await runs(`after-complete-${attempt}`))) if (++attempt > 50) throw new Error('the completed subscription never gave its slot back');
    first.complete(`after-complete-${attempt}`);
    let free = false;
    for (let i = 0; !free; i++) {
      if (i > 50) throw new Error('no slot came back after a completion');
      first.subscribe(`broken-${i}`, 'subscription { invoiceEvents { id ');
      await until(() => first.errors.has(`broken-${i}`));
      free = first.errors.get(`broken-${i}`)![0]!.extensions?.code === 'GRAPHQL_PARSE_FAILED';
    }
    first.subscribe('query', '{ __typename }');
    await until(() => first.nexts.has('query') || first.errors.has('query'));
    expect(first.nexts.get('query')).toEqual([{ data: { __typename: 'Query' } }]);
    expect(await runs('last')).toBe(true);
  });

  it('refuses connections past the per-address limit, anonymous ones included', async () => {
    // Three anonymous, initialised connections held open.
    const open = [0, 1, 2].map(() => track(liveSocket(server.url)));
    expect(await Promise.all(open.map((s) => s.accepted))).toEqual(['ack', 'ack', 'ack']);
    const extra = track(liveSocket(server.url));
    expect(await extra.accepted).toBe(4429);
    expect((await extra.closed).reason).toBe('Too many live connections from this address');
  });

  it('SSE streams count against the same limits as WebSockets: a clear 429 past them, the slot back once closed', async () => {
    const m = await server.merchant();
    const ws = track(await running(server, m.publicToken));
    // The merchant holds its one connection: an SSE stream of the same merchant is refused.
    const refused = await sseStream(server.url, { query: EVENTS, token: m.publicToken });
    expect(refused.status).toBe(429);
    expect(refused.refusal?.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('merchant') });
    ws.close();
    await untilNoLiveConnections(server.url, METRICS_TOKEN);
    const admitted = track(await sseStream(server.url, { query: EVENTS, token: m.publicToken }));
    expect(admitted.status).toBe(200);
    // Per address: two more anonymous streams (following one invoice) fill the three slots; the fourth is refused.
    const invoiceId = await newInvoice(server, m.publicToken);
    const more = [track(await sseStream(server.url, { query: STATUS, variables: { id: invoiceId } })), track(await sseStream(server.url, { query: STATUS, variables: { id: invoiceId } }))];
    expect(more.map((s) => s.status)).toEqual([200, 200]);
    const fourth = await sseStream(server.url, { query: STATUS, variables: { id: invoiceId } });
    expect(fourth.status).toBe(429);
    expect(fourth.refusal?.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('address') });
    const wsOverLimit = track(liveSocket(server.url));
    expect(await wsOverLimit.accepted).toBe(4429);
    for (const s of [admitted, ...more]) s.close();
    await untilNoLiveConnections(server.url, METRICS_TOKEN);
    const again = track(await sseStream(server.url, { query: STATUS, variables: { id: invoiceId } }));
    expect(again.status).toBe(200);
  });

  it('closes a connection idle past LIVE_IDLE_TIMEOUT_MS (1000), not one with a subscription running', async () => {
    const m = await server.merchant();
    const busy = track(await running(server, m.publicToken));
    // Initialised after `busy`: once it is closed for idling, `busy` has been open longer than the timeout.
    const idle = track(liveSocket(server.url));
    expect(await idle.accepted).toBe('ack');
    const started = Date.now();
    expect(await idle.closed).toEqual({ code: 1000, reason: 'Idle: no subscription was running' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    // The busy connection outlived the idle timeout and still takes events.
    expect(busy.closedWith).toBeNull();
    await stillRunning(server, m.publicToken, busy);
  });

  it('closes a connection that never initialises (4408)', async () => {
    const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const code = await new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
    expect(code).toBe(4408);
  });
});

describe.each(DATABASES)('live limits under bursts on %s', (kind) => {
  // Behind one trusted proxy: each connection names its client address in X-Forwarded-For.
  const server = useServer(kind, { TRUST_PROXY_HOPS: '1', LIVE_MAX_CONNECTIONS_PER_IP: '5', LIVE_MAX_CONNECTIONS_PER_MERCHANT: '10', METRICS_TOKEN });
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const opened: (LiveSocket | SseStream)[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) c.close();
    await untilNoLiveConnections(server.url, METRICS_TOKEN);
  });

  it('1,000 subscribes sent back to back on one connection: exactly 100 run, the other 900 get RATE_LIMITED; a completed one frees its slot', { timeout: 60_000 }, async () => {
    const m = await server.merchant();
    const socket = liveSocket(server.url, { token: m.publicToken, headers: from('192.0.2.10') });
    opened.push(socket);
    expect(await socket.accepted).toBe('ack');
    const ids = Array.from({ length: 1_000 }, (_, i) => `s${i}`);
    for (const id of ids) socket.subscribe(id, EVENTS);
    await untilAnswered(server, m.publicToken, socket, ids);
    const refused = ids.filter((id) => socket.errors.has(id));
    const ran = ids.filter((id) => socket.nexts.has(id));
    expect({ ran: ran.length, refused: refused.length }).toEqual({ ran: 100, refused: 900 });
    expect(new Set(refused.flatMap((id) => socket.errors.get(id)!.map((e) => e.extensions?.code)))).toEqual(new Set(['RATE_LIMITED']));
    expect(ran.filter((id) => socket.errors.has(id))).toEqual([]);

    // Full: one more is refused; once one completes, exactly one more runs.
    socket.complete(ran[0]!);
    const later: string[] = [];
    for (let i = 0; !later.some((id) => socket.nexts.has(id)); i++) {
      if (i > 50) throw new Error('the completed subscription never gave its slot back');
      later.push(`later-${i}`);
      socket.subscribe(`later-${i}`, EVENTS);
      await untilAnswered(server, m.publicToken, socket, [`later-${i}`]);
    }
    socket.subscribe('over', EVENTS);
    await untilAnswered(server, m.publicToken, socket, ['over']);
    expect(socket.errors.get('over')?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(socket.closedWith).toBeNull();
  });

  it('a burst of parallel connects from one address: exactly LIVE_MAX_CONNECTIONS_PER_IP (5) get in, WebSockets and SSE streams together', async () => {
    const m = await server.merchant();
    const invoiceId = await newInvoice(server, m.publicToken);
    const address = from('203.0.113.50');
    const sockets = Array.from({ length: 12 }, () => liveSocket(server.url, { headers: address }));
    const [streams, accepted] = await Promise.all([
      Promise.all(Array.from({ length: 12 }, () => sseStream(server.url, { query: STATUS, variables: { id: invoiceId }, headers: address }))),
      Promise.all(sockets.map((s) => s.accepted)),
    ]);
    opened.push(...sockets, ...streams);
    const admitted = accepted.filter((a) => a === 'ack').length + streams.filter((s) => s.status === 200).length;
    expect(admitted).toBe(5);
    expect(accepted.filter((a) => a !== 'ack').every((a) => a === 4429)).toBe(true);
    expect(streams.filter((s) => s.status !== 200).every((s) => s.status === 429 && s.refusal?.error?.code === 'RATE_LIMITED')).toBe(true);
  });

  it('a burst of parallel connects of one merchant from many addresses: exactly LIVE_MAX_CONNECTIONS_PER_MERCHANT (10) get in', async () => {
    const m = await server.merchant();
    const sockets = Array.from({ length: 15 }, (_, i) => liveSocket(server.url, { token: m.publicToken, headers: from(`198.51.100.${i + 1}`) }));
    const [streams, accepted] = await Promise.all([
      Promise.all(Array.from({ length: 15 }, (_, i) => sseStream(server.url, { query: EVENTS, token: m.publicToken, headers: from(`198.51.100.${i + 101}`) }))),
      Promise.all(sockets.map((s) => s.accepted)),
    ]);
    opened.push(...sockets, ...streams);
    const admitted = accepted.filter((a) => a === 'ack').length + streams.filter((s) => s.status === 200).length;
    expect(admitted).toBe(10);
    expect(accepted.filter((a) => a !== 'ack').every((a) => a === 4429)).toBe(true);
    expect(streams.filter((s) => s.status !== 200).every((s) => s.status === 429 && s.refusal?.error?.message?.includes('merchant'))).toBe(true);
  });
});

describe('live connections at shutdown', () => {
  const server = useServer('pglite', { SHUTDOWN_TIMEOUT_MS: '20000' });

  it('closes WebSockets with 1001 and ends SSE streams at once, without waiting for the drain', async () => {
    const m = await server.merchant();
    const socket = liveSocket(server.url, { token: m.publicToken });
    expect(await socket.accepted).toBe('ack');
    socket.subscribe('1', EVENTS);
    const stream = await sseStream(server.url, { query: EVENTS, token: m.publicToken });
    expect(stream.status).toBe(200);
    const started = Date.now();
    await server.app.stop();
    expect((await socket.closed).code).toBe(1001);
    await stream.ended;
    // The drain would have waited up to 60% of SHUTDOWN_TIMEOUT_MS (12 s) for an open stream.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
