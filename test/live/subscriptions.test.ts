// Live updates with real clients: graphql-ws over WebSocket and an SSE reader, against the running server, through
// codegen's typed documents (test/graphql/documents/subscriptions.graphql).
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import {
  LiveDepositEventsDocument,
  LiveInvoiceDeliveriesDocument,
  LiveInvoiceEventsDocument,
  LiveInvoiceStatusDocument,
  LiveWithdrawalEventsDocument,
  LiveWithdrawalStatusDocument,
} from '../../generated/gql/graphql.ts';
import { recordEvent } from '../../src/core/events.ts';
import { LIVE_ITEM_RETRY_DELAYS_MS, MAX_REPLAY } from '../../src/graphql/live.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

/** The one field a subscription document selects. */
type Payload<D> = D[Exclude<keyof D, '__typename'>];

interface Collected<D> {
  values: Payload<D>[];
  /** `extensions.cursor` of each message, in order. */
  cursors: string[];
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

const fieldOf = <D>(data: D) => Object.entries(data as object).find(([k]) => k !== '__typename')![1] as Payload<D>;

function collect<D, V extends Record<string, unknown>>(client: Client, document: TypedDocumentNode<D, V>, variables: V): Collected<D> {
  const collected: Collected<D> = { values: [], cursors: [], errors: [], done: Promise.resolve(), stop: () => {} };
  collected.done = new Promise<void>((resolve) => {
    collected.stop = client.subscribe<D>(
      { query: print(document), variables },
      {
        next: (r) => {
          if (r.errors) return void collected.errors.push(...r.errors);
          collected.values.push(fieldOf(r.data as D));
          collected.cursors.push(String((r.extensions as { cursor?: string } | undefined)?.cursor));
        },
        error: (e) => {
          collected.errors.push(e);
          resolve();
        },
        complete: resolve,
      },
    );
  });
  return collected;
}

/** Reads an SSE subscription with fetch, as a browser's EventSource would (POST form, Accept: text/event-stream). */
function sse<D, V>(server: TestServer, document: TypedDocumentNode<D, V>, variables: V, token?: string) {
  const values: Payload<D>[] = [];
  const cursors: string[] = [];
  const controller = new AbortController();
  const started = fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: print(document), variables }),
    signal: controller.signal,
  }).then(async (res) => {
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString('utf8');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer.slice(0, cut).split('\n').find((l) => l.startsWith('data:'))?.slice(5).trim();
          buffer = buffer.slice(cut + 2);
          const parsed = data ? (JSON.parse(data) as { data?: D; extensions?: { cursor?: string } }) : null;
          if (parsed?.data) {
            values.push(fieldOf(parsed.data as D));
            cursors.push(String(parsed.extensions?.cursor));
          }
        }
      }
    } catch {
      // aborted
    }
  });
  return { values, cursors, stop: () => controller.abort(), started };
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

const CURSOR = /^\d+\.\d+$/;

describe.each(DATABASES)('live subscriptions on %s', (kind) => {
  const server = useServer(kind);
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
  });
  const client = (token?: string) => {
    const c = wsClient(server, token);
    clients.push(c);
    return c;
  };

  const proceed = (invoiceId: string) =>
    server.request('POST', `/api/invoices/v1/regular/${invoiceId}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
  const pay = async (token: string, invoiceId: string) => {
    const seen = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId, amount: '101' } });
    await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token, json: {} });
  };
  const lifecycle = async (token: string, invoiceId: string) => {
    await proceed(invoiceId);
    await pay(token, invoiceId);
  };
  const newInvoice = async (token: string) =>
    (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } })).body.id as string;

  it('invoiceStatusChanged: the current state, then every status change in order, on graphql-ws and SSE alike, each with its cursor', async () => {
    const m = await server.merchant();
    const id = await newInvoice(m.publicToken);
    const anonymous = client();
    const overWs = collect(anonymous, LiveInvoiceStatusDocument, { id });
    const overSse = sse(server, LiveInvoiceStatusDocument, { id });
    await until(() => overWs.values.length === 1 && overSse.values.length === 1);
    await lifecycle(m.publicToken, id);
    const expected = ['CREATED', 'PENDING', 'PROCESSING', 'DONE'];
    await until(() => overWs.values.length === 4 && overSse.values.length === 4);
    expect(overWs.values.map((v) => v.status)).toEqual(expected);
    expect(overSse.values.map((v) => v.status)).toEqual(expected);
    expect(overWs.values.every((v) => v.id === id)).toBe(true);
    // What was paid shows on the step that announced it.
    expect(overWs.values.at(-1)!.paymentDetails!.paidAmount).toBe('101');
    // Every message says where it stands; both transports agree, and the positions only grow.
    expect(overWs.cursors.every((c) => CURSOR.test(c))).toBe(true);
    expect(overSse.cursors).toEqual(overWs.cursors);
    const positions = overWs.cursors.map((c) => c.split('.').map(BigInt) as [bigint, bigint]);
    for (let i = 1; i < positions.length; i++) {
      const [a, b] = [positions[i - 1]!, positions[i]!];
      expect(b[0] > a[0] || (b[0] === a[0] && b[1] > a[1])).toBe(true);
    }
    overWs.stop();
    overSse.stop();
    // An unknown invoice: an error, not a hang.
    const unknown = collect(anonymous, LiveInvoiceStatusDocument, { id: '7NEVJPgnhf1LzX7p6296iF' });
    await unknown.done;
    expect(JSON.stringify(unknown.errors)).toContain('No invoice with id');
  });

  it('invoiceStatusChanged: a message per confirmation step without a status change, and completion after a final status, on both transports', async () => {
    const m = await server.merchant();
    const id = await newInvoice(m.publicToken);
    await proceed(id);
    const overWs = collect(client(), LiveInvoiceStatusDocument, { id });
    const overSse = sse(server, LiveInvoiceStatusDocument, { id });
    // A message carries the invoice as it is when delivered, so each step below waits for the previous one's message
    // (else a slow delivery shows the later step's count).
    const delivered = (n: number) => until(() => overWs.values.length === n && overSse.values.length === n);
    await delivered(1);
    // Seen (pending -> processing), 5 of 19, 12 of 19, then final (done).
    const seen = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: '101' } });
    await delivered(2);
    for (const [i, confirmations] of [5, 12].entries()) {
      await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: { confirmations } });
      await delivered(3 + i);
    }
    await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: {} });
    const steps = [
      ['PENDING', []],
      ['PROCESSING', [0]],
      ['PROCESSING', [5]],
      ['PROCESSING', [12]],
      ['DONE', [19]],
    ];
    // Both complete by themselves after DONE: the WebSocket subscription gets `complete`, the SSE stream ends.
    await overWs.done;
    await overSse.started;
    for (const got of [overWs.values, overSse.values]) expect(got.map((v) => [v.status, v.transactions.map((t) => t.confirmations)])).toEqual(steps);
    expect(overWs.errors).toEqual([]);
    // Subscribing to a final invoice: its state, then completion.
    const late = collect(client(), LiveInvoiceStatusDocument, { id });
    await late.done;
    expect(late.values.map((v) => v.status)).toEqual(['DONE']);
    // The confirmation steps are not webhooks nor in the merchant's event feed: the spec's statuses are.
    const feed = await server.request('GET', '/api/company/events?limit=100', { token: m.publicToken });
    expect(JSON.stringify(feed.body)).not.toContain('invoice.confirmations');
  });

  it('resuming with after: the changes missed while away, then live ones, none twice', async () => {
    const m = await server.merchant();
    const events = collect(client(m.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(events, () => newInvoice(m.publicToken));
    const first = await newInvoice(m.publicToken);
    await until(() => events.values.some((v) => v.id === first));
    const lastCursor = events.cursors.at(-1)!;
    const seenBefore = events.values.length;
    events.stop();

    // While away: a new invoice is created and filled, and the first one is filled and paid.
    const missed = await newInvoice(m.publicToken);
    await proceed(missed);
    await lifecycle(m.publicToken, first);

    const resumed = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: lastCursor });
    const expectedMissed = [
      [missed, 'CREATED'],
      [missed, 'PENDING'],
      [first, 'PENDING'],
      [first, 'PROCESSING'],
      [first, 'DONE'],
    ];
    await until(() => resumed.values.length >= expectedMissed.length);
    // Then live: a change made now follows the history.
    const later = await newInvoice(m.publicToken);
    await until(() => resumed.values.some((v) => v.id === later));
    await new Promise((r) => setTimeout(r, 200));
    expect(resumed.values.map((v) => [v.id, v.status])).toEqual([...expectedMissed, [later, 'CREATED']]);
    expect(seenBefore).toBeGreaterThan(0);
    // The cursors continue where the first subscription stopped.
    expect(new Set([...events.cursors, ...resumed.cursors]).size).toBe(events.cursors.length + resumed.cursors.length);

    // One invoice's status stream resumes from the cursor of its current state: only what came after.
    const one = await newInvoice(m.publicToken);
    const status = collect(client(), LiveInvoiceStatusDocument, { id: one });
    await until(() => status.values.length === 1);
    status.stop();
    await lifecycle(m.publicToken, one);
    const again = collect(client(), LiveInvoiceStatusDocument, { id: one, after: status.cursors[0]! });
    await until(() => again.values.length === 3);
    await new Promise((r) => setTimeout(r, 200));
    expect(again.values.map((v) => v.status)).toEqual(['PENDING', 'PROCESSING', 'DONE']);

    // A cursor that is not one is refused.
    for (const after of ['x', '1.2.3', '-1.5', '99999999999999999999.1', `1.${'9'.repeat(19)}`]) {
      const bad = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after });
      await bad.done;
      expect(JSON.stringify(bad.errors), after).toContain('VALIDATION_FAILED');
    }
  });

  it('resuming is bounded: a cursor ahead of every change or more than MAX_REPLAY changes behind is refused', { timeout: 60_000 }, async () => {
    const m = await server.merchant();
    const ahead = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: '9223372036854775807.0' });
    await ahead.done;
    expect(JSON.stringify(ahead.errors)).toContain('is not a cursor of this service');
    // A merchant with a long history (events written in bulk), resuming from before all of it.
    const start = collect(client(m.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(start, () => newInvoice(m.publicToken));
    const from = start.cursors[0]!;
    start.stop();
    await server.app.db.prisma.$executeRaw`
      INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload")
      SELECT gen_random_uuid()::text, ${m.companyId}::uuid, 'invoice.created', 'invoice', 'bulk' || n, '{}'::json FROM generate_series(1, ${MAX_REPLAY + 1}) n`;
    // The bus has passed the bulk once another merchant's later change reached a subscriber.
    const other = await server.merchant();
    const probe = collect(client(other.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(probe, () => newInvoice(other.publicToken), 30_000);
    const old = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: from });
    await old.done;
    expect(JSON.stringify(old.errors)).toContain(`is more than ${MAX_REPLAY} changes behind`);
    expect(old.values).toEqual([]);
  });

  it('one invoice followed by its merchant and by its client: each gets its own view (deliveries for the merchant only), fresh on every change', async () => {
    for (const merchantFirst of [true, false]) {
      const m = await server.merchant();
      await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: 'https://merchant.example/hooks' } });
      const id = await newInvoice(m.publicToken);
      const subscribe = (token?: string) => collect(client(token), LiveInvoiceDeliveriesDocument, { id });
      let merchant: ReturnType<typeof subscribe>;
      let anonymous: ReturnType<typeof subscribe>;
      if (merchantFirst) {
        merchant = subscribe(m.publicToken);
        anonymous = subscribe();
      } else {
        anonymous = subscribe();
        merchant = subscribe(m.publicToken);
      }
      await until(() => merchant.values.length === 1 && anonymous.values.length === 1);
      await proceed(id);
      await until(() => merchant.values.length === 2 && anonymous.values.length === 2);
      expect(anonymous.values.map((v) => v.webhookDeliveries)).toEqual([null, null]);
      // Each message reads the deliveries as they are then: one, then two.
      expect(merchant.values.map((v) => v.webhookDeliveries?.map((d) => d.eventType))).toEqual([['INVOICE_CREATED'], ['INVOICE_CREATED', 'INVOICE_PENDING']]);
    }
  });

  it('a subscription that does not parse gets its own error; the connection and its other subscriptions go on', async () => {
    const m = await server.merchant();
    const c = client(m.publicToken);
    const good = collect(c, LiveInvoiceEventsDocument, {});
    await whenListening(good, () => newInvoice(m.publicToken));
    const errors: unknown[] = [];
    await new Promise<void>((resolve) =>
      c.subscribe({ query: 'subscription { invoiceEvents { id ' }, { next: () => {}, error: (e) => (errors.push(e), resolve()), complete: resolve }),
    );
    expect(JSON.stringify(errors)).toContain('GRAPHQL_PARSE_FAILED');
    const later = await newInvoice(m.publicToken);
    await until(() => good.values.some((v) => v.id === later));
  });

  it('a change that was rolled back never reaches a subscriber; the committed one after it does', async () => {
    const m = await server.merchant();
    const events = collect(client(m.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(events, () => newInvoice(m.publicToken));
    const id = await newInvoice(m.publicToken);
    const status = collect(client(), LiveInvoiceStatusDocument, { id });
    await until(() => status.values.length === 1);
    const { db, bus } = server.app.platform;
    // A status change of this invoice whose transaction fails after writing its event.
    await expect(
      db.$transaction(async (tx) => {
        await tx.invoice.update({ where: { id }, data: { status: 'closed' } });
        await recordEvent(tx, { type: 'invoice.closed', companyId: m.companyId, subject: { type: 'invoice', id }, payload: { invoiceId: id, status: 'closed' } });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    bus.committed();
    await proceed(id);
    await until(() => status.values.length === 2 && events.values.some((v) => v.id === id));
    await new Promise((r) => setTimeout(r, 300));
    expect(status.values.map((v) => v.status), JSON.stringify(status.cursors)).toEqual(['CREATED', 'PENDING']);
    expect(events.values.filter((v) => v.id === id).map((v) => v.status)).toEqual(['CREATED', 'PENDING']);
  });

  it('a change whose read fails is tried again; one that keeps failing ends the subscription (SERVICE_UNAVAILABLE) before any later change, and resuming from the last cursor sends it', { timeout: 30_000 }, async () => {
    const m = await server.merchant();
    const events = collect(client(m.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(events, () => newInvoice(m.publicToken));
    const [id, other] = [await newInvoice(m.publicToken), await newInvoice(m.publicToken)];
    await until(() => events.values.some((v) => v.id === other));
    const { db, bus } = server.app.platform;
    // The read of `id` that a change's message needs fails while `failures` lasts, as on a dropped database connection.
    let failures = 0;
    const findUnique = db.invoice.findUnique.bind(db.invoice);
    const spy = vi.spyOn(db.invoice, 'findUnique').mockImplementation(((args: { where: { id?: string } }) => {
      if (args.where.id !== id || failures <= 0) return findUnique(args as never);
      failures--;
      return Promise.reject(new Error('Connection terminated unexpectedly (test)'));
    }) as never);
    const change = async (invoiceId: string, status: string) => {
      await db.$transaction((tx) => recordEvent(tx, { type: `invoice.${status}`, companyId: m.companyId, subject: { type: 'invoice', id: invoiceId }, payload: { invoiceId, status } }));
      bus.committed();
    };
    const statuses = (values: { id: string; status: string }[]) => values.filter((v) => v.id === id || v.id === other).map((v) => `${v.id === id ? 'id' : 'other'} ${v.status}`);
    try {
      // One failed read: tried again, and the change arrives as if nothing happened.
      failures = 1;
      await change(id, 'pending');
      await until(() => events.values.some((v) => v.id === id && v.status === 'PENDING'));
      expect(failures).toBe(0);
      expect(events.errors).toEqual([]);

      // Reads that keep failing: after the last try an error that says what to do, then completion; the change of
      // `other` committed right after it is not sent on this subscription (it would leave a hole behind the cursor).
      const lastCursor = events.cursors.at(-1)!;
      failures = LIVE_ITEM_RETRY_DELAYS_MS.length + 1;
      await change(id, 'processing');
      await change(other, 'pending');
      await events.done;
      expect(failures).toBe(0);
      expect(events.errors).toHaveLength(1);
      expect(JSON.stringify(events.errors)).toContain('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(events.errors)).toContain('`after`');
      expect(statuses(events.values)).toEqual(['id CREATED', 'other CREATED', 'id PENDING']);

      // Resuming from the last cursor received: the change that failed, then the one after it, in order.
      const resumed = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: lastCursor });
      await until(() => resumed.values.some((v) => v.id === other));
      expect(statuses(resumed.values)).toEqual(['id PROCESSING', 'other PENDING']);
      expect(resumed.errors).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('a resume whose history read fails on our side ends with SERVICE_UNAVAILABLE (subscribe again), and the next resume sends that history', async () => {
    const m = await server.merchant();
    const events = collect(client(m.publicToken), LiveInvoiceEventsDocument, {});
    await whenListening(events, () => newInvoice(m.publicToken));
    const lastCursor = events.cursors.at(-1)!;
    events.stop();
    const missed = await newInvoice(m.publicToken);
    const { db } = server.app.platform;
    // The history read after a cursor (readEvents up to the bus's position) fails once, as on a dropped connection.
    let failures = 1;
    const queryRaw = db.$queryRaw.bind(db);
    const spy = vi.spyOn(db, '$queryRaw').mockImplementation(((query: unknown, ...values: unknown[]) => {
      const text = Array.isArray(query) ? query.join('?') : '';
      if (failures > 0 && text.includes('AND (x."txid", x."seq") <= (')) {
        failures--;
        return Promise.reject(new Error('Connection terminated unexpectedly (test)'));
      }
      return (queryRaw as (...args: unknown[]) => Promise<unknown>)(query, ...values);
    }) as never);
    try {
      const failed = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: lastCursor });
      await failed.done;
      expect(failures).toBe(0);
      expect(failed.values).toEqual([]);
      expect(JSON.stringify(failed.errors)).toContain('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(failed.errors)).toContain('subscribe again');
    } finally {
      spy.mockRestore();
    }
    const resumed = collect(client(m.publicToken), LiveInvoiceEventsDocument, { after: lastCursor });
    await until(() => resumed.values.some((v) => v.id === missed));
    expect(resumed.values.map((v) => [v.id, v.status])).toEqual([[missed, 'CREATED']]);
  });

  it('invoiceEvents: the merchant’s own invoices only, creation included; a token is required and must be valid', async () => {
    const a = await server.merchant();
    const b = await server.merchant();
    const ofA = collect(client(a.publicToken), LiveInvoiceEventsDocument, {});
    const ofB = collect(client(b.publicToken), LiveInvoiceEventsDocument, {});
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
    // Resuming does not cross merchants either: B's history after an early cursor holds none of A's invoices.
    const fromStart = collect(client(b.publicToken), LiveInvoiceEventsDocument, { after: '1.0' });
    await until(() => ofB.values.every((v) => fromStart.values.some((f) => f.id === v.id)));
    await new Promise((r) => setTimeout(r, 200));
    const ofAIds = new Set(ofA.values.map((v) => v.id));
    expect(fromStart.values.filter((v) => ofAIds.has(v.id))).toEqual([]);

    // Without a token: a clear GraphQL error, for every merchant subscription.
    const anonymous = client();
    const refused = collect(anonymous, LiveInvoiceEventsDocument, {});
    await refused.done;
    expect(JSON.stringify(refused.errors)).toContain('UNAUTHENTICATED');
    const uid = '3f0b5f3e-8a43-4a4c-9d7e-2d2b8f0f7d11';
    for (const other of [
      collect(anonymous, LiveWithdrawalEventsDocument, {}),
      collect(anonymous, LiveDepositEventsDocument, {}),
      collect(anonymous, LiveWithdrawalStatusDocument, { uid }),
    ]) {
      await other.done;
      expect(JSON.stringify(other.errors)).toContain('UNAUTHENTICATED');
    }
    // A bad token: the connection is refused with 4403.
    const closed = collect(client('pk_not_a_real_token'), LiveInvoiceEventsDocument, {});
    await closed.done;
    expect((closed.errors[0] as { code?: number }).code).toBe(4403);
    // Over SSE, the token goes in the Authorization header.
    const viaSse = sse(server, LiveInvoiceEventsDocument, {}, b.publicToken);
    await whenListening(viaSse, () => newInvoice(b.publicToken));
    expect(viaSse.values[0]!.status).toBe('CREATED');
    viaSse.stop();
  });

  it('withdrawalStatusChanged, withdrawalEvents and depositEvents follow the webhooks’ steps, and resume', async () => {
    const m = await server.merchant();
    const ws = client(m.publicToken);
    const address = (await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'trc20usdt', internalUserId: 'live' } })).body;
    const deposits = collect(ws, LiveDepositEventsDocument, {});
    const withdrawals = collect(ws, LiveWithdrawalEventsDocument, {});
    const deposit = (amount: string) => server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount } });
    await whenListening(deposits, () => deposit('1'));
    const seen = await deposit('100');
    await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token: m.publicToken, json: {} });
    const depositSteps = () => deposits.values.filter((d) => d.amount === '100');
    await until(() => depositSteps().length === 2);
    expect(depositSteps().map((d) => d.status)).toEqual(['PROCESSING', 'DONE']);
    // The deposit steps again, from the cursor before them.
    const before = deposits.cursors[deposits.values.indexOf(depositSteps()[0]!) - 1]!;
    const replay = collect(ws, LiveDepositEventsDocument, { after: before });
    await until(() => replay.values.length >= 2);
    expect(replay.values.slice(0, 2).map((d) => [d.amount, d.status])).toEqual([['100', 'PROCESSING'], ['100', 'DONE']]);
    replay.stop();

    const withdraw = async (amount: string) =>
      (await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount, tag: '', to: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', asset: 'trc20usdt' }] } }))
        .body[0].uid as string;
    await whenListening(withdrawals, () => withdraw('5'));
    const uid = await withdraw('10');
    const one = collect(ws, LiveWithdrawalStatusDocument, { uid });
    const ofThis = () => withdrawals.values.filter((w) => w.uid === uid);
    await until(() => ofThis().length === 2);
    await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.publicToken });
    await until(() => ofThis().length === 3 && one.values.at(-1)?.status === 'DONE');
    const steps = ofThis().map((w) => [w.status, w.txHash === null ? 'no hash' : 'hash']);
    expect(steps).toEqual([['PROCESSING', 'no hash'], ['PROCESSING', 'hash'], ['DONE', 'hash']]);
    expect(one.values[0]!.uid).toBe(uid);
    // Resuming one withdrawal from its first message replays only the steps after it.
    const resumed = collect(ws, LiveWithdrawalStatusDocument, { uid, after: one.cursors[0]! });
    await until(() => resumed.values.at(-1)?.status === 'DONE');
    expect(resumed.values.map((w) => w.status)).toEqual(one.values.slice(1).map((w) => w.status));
    // Another merchant cannot follow it.
    const foreign = collect(client((await server.merchant()).publicToken), LiveWithdrawalStatusDocument, { uid });
    await foreign.done;
    expect(JSON.stringify(foreign.errors)).toContain('NOT_FOUND');
  });
});
