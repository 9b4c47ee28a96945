// Two server processes on one PostgreSQL with REDIS_URL: a subscriber on instance A sees changes made through
// instance B (graphql-ws and SSE), one process relays the event table through Redis, and when that process goes
// away the other takes over without losing a change. And a client that loses its server resumes where it was.
import { testMerchant, type TestMerchant } from '../support/server.ts';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { freePort, killServer, startServerProcess, stopAllChildren, stopServer, tempDir, type ServerProcess } from '../support/processes.ts';

afterAll(() => stopAllChildren());

const redisUrl = inject('redisUrl');
const EVENTS = 'subscription { invoiceEvents { id status } }';
const RELAYING = 'this process relays events to the fan-out';

const until = async (check: () => boolean, timeoutMs = 20_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

const clients: Client[] = [];

describe.runIf(redisUrl && DATABASES.includes('postgres'))('live updates across instances (PostgreSQL + Redis)', { timeout: 120_000 }, () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await database?.drop();
  });

  it('a subscriber on A sees every change made on B, in order, over graphql-ws and SSE; a relay change loses nothing', async () => {
    database = await freshDatabase('postgres');
    const db = await openDatabase({ url: database.url, migrate: false, poolSize: 1 });
    const merchant = testMerchant(await createCompany(db.prisma, { name: 'Two instances' }));
    await db.close();
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl!, EVENT_POLL_MS: '200' };
    const start = (name: string) => startServerProcess({ ...env, DATA_DIR: tempDir(`payrail-${name}-`) });
    // B starts first and takes the relay lease; A relays nothing while B holds it.
    const b = await start('b');
    const a = await start('a');
    expect(b.proc.stdout).toContain(RELAYING);
    expect(a.proc.stdout).not.toContain(RELAYING);

    const onA = subscribeOverWs(a, merchant.publicToken);
    const overSse = sseReader(a, merchant.publicToken);
    const create = async (on: ServerProcess) => {
      const res = await on.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 5 }] } });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    // Both subscriptions are registered once a probe invoice reaches them (probes until one does).
    for (const deadline = Date.now() + 20_000; !(onA.values.length > 0 && overSse.values.length > 0); ) {
      if (Date.now() > deadline) throw new Error('the subscriptions on A never received anything');
      await create(b);
      await until(() => onA.values.length > 0 && overSse.values.length > 0, 500).catch(() => undefined);
    }

    const id = await create(b);
    await b.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
    const seen = await b.request('POST', '/api/sandbox/transfers', { token: merchant.publicToken, json: { invoiceId: id, amount: '6' } });
    await b.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: merchant.publicToken });
    const steps = (values: { id: string; status: string }[]) => values.filter((v) => v.id === id).map((v) => v.status);
    const lifecycle = ['CREATED', 'PENDING', 'PROCESSING', 'DONE'];
    await until(() => steps(onA.values).length === 4 && steps(overSse.values).length === 4);
    expect(steps(onA.values)).toEqual(lifecycle);
    expect(steps(overSse.values)).toEqual(lifecycle);
    expect(onA.cursors.every((c) => /^\d+\.\d+$/.test(c))).toBe(true);
    overSse.stop();

    // The relay dies (kill -9: its lease is not released). Once the lease ends, A or a newly started C takes
    // over; what C writes before and after reaches the subscriber on A, in order.
    await killServer(b);
    const c = await start('c');
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(await create(c));
    const relays = () => [a, c].filter((s) => s.proc.stdout.includes(RELAYING));
    await until(() => relays().length > 0, 30_000);
    for (let i = 0; i < 3; i++) made.push(await create(c));
    await until(() => made.every((x) => onA.values.some((v) => v.id === x)), 30_000);
    expect(onA.values.filter((v) => made.includes(v.id)).map((v) => v.id)).toEqual(made);
    expect(relays()).toHaveLength(1);
  });
});

function subscribeOverWs(server: ServerProcess, token: string) {
  const client = createClient({
    url: `${server.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  clients.push(client);
  const values: { id: string; status: string }[] = [];
  const cursors: string[] = [];
  client.subscribe<{ invoiceEvents: { id: string; status: string } }>(
    { query: EVENTS },
    {
      next: (r) => {
        if (r.data) values.push(r.data.invoiceEvents);
        cursors.push(String((r.extensions as { cursor?: string } | undefined)?.cursor));
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
  return { values, cursors };
}

/** An SSE subscription to invoiceEvents on `server`, read with fetch as a browser would. */
function sseReader(server: ServerProcess, token: string) {
  const values: { id: string; status: string }[] = [];
  const controller = new AbortController();
  void fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: EVENTS }),
    signal: controller.signal,
  })
    .then(async (res) => {
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString('utf8');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer.slice(0, cut).split('\n').find((l) => l.startsWith('data:'));
          buffer = buffer.slice(cut + 2);
          const parsed = data ? (JSON.parse(data.slice(5)) as { data?: { invoiceEvents: { id: string; status: string } } }) : null;
          if (parsed?.data) values.push(parsed.data.invoiceEvents);
        }
      }
    })
    .catch(() => undefined);
  return { values, stop: () => controller.abort() };
}

describe.runIf(DATABASES.includes('postgres'))('a client that loses its server (PostgreSQL)', { timeout: 120_000 }, () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  it('reconnects and resumes from its last cursor, as docs/live.md shows: the changes made while it was away, then live ones', async () => {
    database = await freshDatabase('postgres');
    const db = await openDatabase({ url: database.url, migrate: false, poolSize: 1 });
    const merchant = testMerchant(await createCompany(db.prisma, { name: 'Reconnecting' }));
    await db.close();
    const port = String(await freePort());
    const env = { DATABASE_URL: database.url };
    const first = await startServerProcess({ ...env, PORT: port, DATA_DIR: tempDir('payrail-r1-') });
    const create = async (on: ServerProcess) =>
      (await on.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } })).body.id as string;

    // The docs' client: the same variables object is sent again on every reconnection, with the last cursor in it.
    const client = createClient({
      url: `ws://127.0.0.1:${port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${merchant.publicToken}` },
      retryAttempts: 1_000,
      retryWait: () => new Promise((r) => setTimeout(r, 200)),
      // A server that is down refuses the connection (an error, not a close): retry that too.
      shouldRetry: () => true,
    });
    clients.push(client);
    const received: string[] = [];
    const variables: { after?: string } = {};
    client.subscribe<{ invoiceEvents: { id: string } }>(
      { query: 'subscription($after: String) { invoiceEvents(after: $after) { id } }', variables },
      {
        next: ({ data, extensions }) => {
          variables.after = (extensions as { cursor?: string } | undefined)?.cursor;
          received.push(data!.invoiceEvents.id);
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    const warmUp: string[] = [];
    for (const deadline = Date.now() + 20_000; received.length === 0; ) {
      if (Date.now() > deadline) throw new Error('the subscription never received anything');
      warmUp.push(await create(first));
      await until(() => received.length > 0, 500).catch(() => undefined);
    }
    // Every invoice made after the first one it saw arrives before the server goes (a loaded machine may have made
    // several meanwhile; those made before the subscription started are never sent): only then is "before" known.
    const pending = warmUp.slice(warmUp.indexOf(received[0]!));
    await until(() => pending.every((id) => received.includes(id)), 30_000);
    const before = [...received];

    // The server dies; while the client retries in vain, another instance (elsewhere) takes two invoices.
    await killServer(first);
    const elsewhere = await startServerProcess({ ...env, DATA_DIR: tempDir('payrail-r2-') });
    const missed = [await create(elsewhere), await create(elsewhere)];
    await stopServer(elsewhere);
    // The server comes back at the client's address; the client reconnects by itself.
    const back = await startServerProcess({ ...env, PORT: port, DATA_DIR: tempDir('payrail-r3-') });
    await until(() => missed.every((id) => received.includes(id)), 30_000);
    const live = await create(back);
    await until(() => received.includes(live), 30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.slice(before.length)).toEqual([...missed, live]);
    expect(new Set(received).size).toBe(received.length);
  });
});
