// Live invoice status with real clients: graphql-ws over WebSocket and an SSE reader, against the running server.
import { createClient, type Client } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const STATUS_DOC = 'subscription($id: ID!){ invoiceStatusChanged(id:$id){ id status } }';
const EVENTS_DOC = 'subscription { invoiceEvents { id status } }';

type Item = Record<string, string | null>;

interface Collected {
  values: Item[];
  errors: unknown[];
  done: Promise<void>;
  stop(): void;
}

function wsClient(server: TestServer, token?: string): Client {
  return createClient({
    url: server.url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

function collect(client: Client, query: string, field: string, variables: Record<string, unknown> = {}): Collected {
  const values: Collected['values'] = [];
  const errors: unknown[] = [];
  let stop = () => {};
  const done = new Promise<void>((resolve) => {
    stop = client.subscribe<Record<string, Item>>(
      { query, variables },
      {
        next: (r) => (r.errors ? errors.push(...r.errors) : values.push(r.data![field]!)),
        error: (e) => {
          errors.push(e);
          resolve();
        },
        complete: resolve,
      },
    );
  });
  return { values, errors, done, stop: () => stop() };
}

/** Reads an SSE subscription with fetch, as a browser's EventSource would (POST form, Accept: text/event-stream). */
function sse(server: TestServer, query: string, variables: Record<string, unknown>, token?: string) {
  const values: Item[] = [];
  const controller = new AbortController();
  const started = fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
    signal: controller.signal,
  }).then(async (res) => {
    const reader = res.body!.getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += Buffer.from(value).toString('utf8');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split('\n').find((l) => l.startsWith('data:'));
          if (!data) continue;
          const parsed = JSON.parse(data.slice(5)) as { data?: Record<string, Item> };
          if (parsed.data) values.push(Object.values(parsed.data)[0]!);
        }
      }
    } catch {
      // aborted
    }
  });
  return { values, stop: () => controller.abort(), started };
}

/**
 * Fires `probe` until the subscription shows something (so it is registered on the server), however slow the
 * machine; assertions then pick their own objects by id.
 */
async function whenListening(collected: { values: unknown[] }, probe: () => Promise<unknown>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (collected.values.length === 0) {
    if (Date.now() > end) throw new Error('the subscription never received anything');
    await probe();
    const wait = Date.now() + 500;
    while (collected.values.length === 0 && Date.now() < wait) await new Promise((r) => setTimeout(r, 20));
  }
}

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.each(DATABASES)('live subscriptions on %s', (kind) => {
  const server = useServer(kind);
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
  });

  const lifecycle = async (token: string, invoiceId: string) => {
    await server.request('POST', `/api/invoices/v1/regular/${invoiceId}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
    const seen = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId, amount: '101' } });
    await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token, json: {} });
  };
  const newInvoice = async (token: string) =>
    (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } })).body.id as string;

  it('invoiceStatusChanged: the current state, then every status change in order, on graphql-ws and SSE alike', async () => {
    const m = await server.merchant();
    const id = await newInvoice(m.publicToken);
    const client = wsClient(server);
    clients.push(client);
    const overWs = collect(client, STATUS_DOC, 'invoiceStatusChanged', { id });
    const overSse = sse(server, STATUS_DOC, { id });
    await until(() => overWs.values.length === 1 && overSse.values.length === 1);
    await lifecycle(m.publicToken, id);
    const expected = ['CREATED', 'PENDING', 'PROCESSING', 'DONE'];
    await until(() => overWs.values.length === 4 && overSse.values.length === 4);
    expect(overWs.values.map((v) => v.status)).toEqual(expected);
    expect(overSse.values.map((v) => v.status)).toEqual(expected);
    expect(overWs.values.every((v) => v.id === id)).toBe(true);
    overWs.stop();
    overSse.stop();
    // An unknown invoice: an error, not a hang.
    const unknown = collect(client, STATUS_DOC, 'invoiceStatusChanged', { id: '7NEVJPgnhf1LzX7p6296iF' });
    await unknown.done;
    expect(JSON.stringify(unknown.errors)).toContain('No invoice with id');
  });

  it('invoiceEvents: the merchant’s own invoices only, creation included; a token is required and must be valid', async () => {
    const a = await server.merchant();
    const b = await server.merchant();
    const clientA = wsClient(server, a.publicToken);
    const clientB = wsClient(server, b.publicToken);
    clients.push(clientA, clientB);
    const ofA = collect(clientA, EVENTS_DOC, 'invoiceEvents');
    const ofB = collect(clientB, EVENTS_DOC, 'invoiceEvents');
    await whenListening(ofA, () => newInvoice(a.publicToken));
    await whenListening(ofB, () => newInvoice(b.publicToken));
    const seenByB = ofB.values.length;
    const id = await newInvoice(a.publicToken);
    await lifecycle(a.publicToken, id);
    const ofThis = () => ofA.values.filter((v) => v.id === id);
    await until(() => ofThis().length >= 4);
    expect(ofThis().map((v) => v.status)).toEqual(['CREATED', 'PENDING', 'PROCESSING', 'DONE']);
    // B saw only its own probe invoices.
    expect(ofB.values.length).toBe(seenByB);
    expect(ofB.values.some((v) => v.id === id)).toBe(false);

    // Without a token: a clear GraphQL error.
    const anonymous = wsClient(server);
    clients.push(anonymous);
    const refused = collect(anonymous, EVENTS_DOC, 'invoiceEvents');
    await refused.done;
    expect(JSON.stringify(refused.errors)).toContain('UNAUTHENTICATED');
    for (const [query, field] of [
      ['subscription { withdrawalEvents { uid } }', 'withdrawalEvents'],
      ['subscription { depositEvents { id } }', 'depositEvents'],
      ['subscription { withdrawalStatusChanged(uid: "3f0b5f3e-8a43-4a4c-9d7e-2d2b8f0f7d11") { uid } }', 'withdrawalStatusChanged'],
    ] as const) {
      const other = collect(anonymous, query, field);
      await other.done;
      expect(JSON.stringify(other.errors), field).toContain('UNAUTHENTICATED');
    }
    // A bad token: the connection is refused with 4403.
    const forged = wsClient(server, 'pk_not_a_real_token');
    clients.push(forged);
    const closed = collect(forged, EVENTS_DOC, 'invoiceEvents');
    await closed.done;
    expect((closed.errors[0] as { code?: number }).code).toBe(4403);
    // Over SSE, the token goes in the Authorization header.
    const viaSse = sse(server, EVENTS_DOC, {}, b.publicToken);
    await whenListening(viaSse, () => newInvoice(b.publicToken));
    expect(viaSse.values[0]!.status).toBe('CREATED');
    viaSse.stop();
  });

  it('withdrawalStatusChanged, withdrawalEvents and depositEvents follow the webhooks’ steps', async () => {
    const m = await server.merchant();
    const client = wsClient(server, m.publicToken);
    clients.push(client);
    const address = (await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'trc20usdt', internalUserId: 'live' } })).body;
    const deposits = collect(client, 'subscription { depositEvents { id status amount } }', 'depositEvents');
    const withdrawals = collect(client, 'subscription { withdrawalEvents { uid status txHash } }', 'withdrawalEvents');
    const deposit = (amount: string) => server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount } });
    await whenListening(deposits, () => deposit('1'));
    const seen = await deposit('100');
    await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: {} });
    const depositSteps = () => deposits.values.filter((d) => d.amount === '100');
    await until(() => depositSteps().length === 2);
    expect(depositSteps().map((d) => d.status)).toEqual(['PROCESSING', 'DONE']);

    const withdraw = async (amount: string) =>
      (await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount, tag: '', to: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', asset: 'trc20usdt' }] } }))
        .body[0].uid as string;
    await whenListening(withdrawals, () => withdraw('5'));
    const uid = await withdraw('10');
    const one = collect(client, 'subscription($uid: ID!){ withdrawalStatusChanged(uid:$uid){ uid status } }', 'withdrawalStatusChanged', { uid });
    const ofThis = () => withdrawals.values.filter((w) => w.uid === uid);
    await until(() => ofThis().length === 2);
    await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.publicToken });
    await until(() => ofThis().length === 3 && one.values.at(-1)?.status === 'DONE');
    const steps = ofThis().map((w) => [w.status, w.txHash === null ? 'no hash' : 'hash']);
    expect(steps).toEqual([['PROCESSING', 'no hash'], ['PROCESSING', 'hash'], ['DONE', 'hash']]);
    expect(one.values[0]).toEqual({ uid, status: expect.any(String) });
    // Another merchant cannot follow it.
    const other = wsClient(server, (await server.merchant()).publicToken);
    clients.push(other);
    const foreign = collect(other, 'subscription($uid: ID!){ withdrawalStatusChanged(uid:$uid){ uid } }', 'withdrawalStatusChanged', { uid });
    await foreign.done;
    expect(JSON.stringify(foreign.errors)).toContain('NOT_FOUND');
  });
});

