// The merchant's order reference and metadata (issue 31): limits, the open-order replay and its 409, both
// surfaces, webhooks; payUrl, acceptedAt and the merchant's settlement on REST reads and in webhooks.
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WEBHOOK_PIPELINE: '1', WEBHOOK_TIMEOUT_MS: '15000' };
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const order = (orderId: string, extra: Record<string, unknown> = {}) => ({ invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }], orderId, ...extra });

describe.each(DATABASES)('invoice orderId, metadata, payUrl and settlement on %s', (kind) => {
  const server = useServer(kind, ENV);
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });
  const create = (token: string, json: unknown, headers: Record<string, string> = {}) => server.request('POST', '/api/invoices/v1/regular', { token, json, headers });
  const read = async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
  const proceed = (id: string) => server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });

  async function merchantWithReceiver(server: TestServer) {
    const m = await server.merchant();
    const r = await startReceiver(() => m.secretKey);
    receivers.push(r);
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: r.url } })).status).toBe(200);
    return { m, r };
  }

  it('orderId and metadata come back on create, read and GraphQL, with payUrl; keys keep their order', async () => {
    const m = await server.merchant();
    const metadata = { zeta: '1', alpha: 'two', 'mixed Case-key': 'ünïcode ✓' };
    const res = await create(m.publicToken, order('A-1', { metadata }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ orderId: 'A-1', metadata, payUrl: `https://checkout.example/pay/${res.body.id}` });
    expect(Object.keys(res.body.metadata)).toEqual(['zeta', 'alpha', 'mixed Case-key']);
    expect(Object.keys(res.body)).toEqual(['id', 'status', 'createdAt', 'company', 'invoiceContent', 'mode', 'paymentLinkId', 'payUrl', 'orderId', 'metadata']);
    const again = await read(res.body.id);
    expect(again).toMatchObject({ orderId: 'A-1', metadata, payUrl: res.body.payUrl });
    expect(Object.keys(again.metadata)).toEqual(['zeta', 'alpha', 'mixed Case-key']);

    const plain = await create(m.publicToken, { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }], metadata: {} });
    expect(plain.status).toBe(201);
    expect(plain.body).not.toHaveProperty('orderId');
    expect(plain.body).not.toHaveProperty('metadata');
    expect(plain.body.payUrl).toBe(`https://checkout.example/pay/${plain.body.id}`);

    const gql = await server.graphql(
      `mutation($input: CreateInvoiceInput!) { createInvoice(input: $input) { __typename ... on CreateInvoiceSuccess { invoice { id orderId metadata payUrl } } ... on Error { code message } } }`,
      { input: { invoiceCurrency: 'USD', items: [{ name: 'x', price: '5' }], orderId: 'G-1', metadata: { b: '1', a: '2' } } },
      m.publicToken,
    );
    expect(gql.body.errors).toBeUndefined();
    const data = gql.body.data.createInvoice.invoice;
    expect(data).toMatchObject({ orderId: 'G-1', metadata: { b: '1', a: '2' }, payUrl: `https://checkout.example/pay/${data.id}` });
    expect(Object.keys(data.metadata)).toEqual(['b', 'a']);
    expect((await read(data.id)).orderId).toBe('G-1');
    const literal = await server.graphql(
      `{ invoice(id: "${res.body.id}") { orderId metadata acceptedAt settlement } }`,
    );
    expect(literal.body.data.invoice).toEqual({ orderId: 'A-1', metadata, acceptedAt: null, settlement: null });
    // The same limits on GraphQL, through the same schema.
    const bad = await server.graphql(
      `mutation { createInvoice(input: {invoiceCurrency: USD, items: [{name: "x", price: "1"}], metadata: {k: "${'v'.repeat(501)}"}}) { __typename ... on Error { code } ... on ValidationError { details { path message } } } }`,
      {},
      m.publicToken,
    );
    expect(bad.body.data.createInvoice).toEqual({ __typename: 'ValidationError', code: 'VALIDATION_FAILED', details: [{ path: 'metadata.k', message: 'must be at most 500 characters' }] });
  });

  it('refuses orderId and metadata past their limits, naming the field', async () => {
    const m = await server.merchant();
    const details = async (json: unknown) => {
      const res = await create(m.publicToken, json);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      return res.body.error.details as { path: string; message: string }[];
    };
    expect(await details(order('x'.repeat(129)))).toEqual([{ path: 'orderId', message: 'must be at most 128 characters' }]);
    expect(await details(order(''))).toEqual([{ path: 'orderId', message: 'must not be empty' }]);
    expect(await details(order('a\u0007b'))).toEqual([{ path: 'orderId', message: 'must not contain control characters' }]);
    expect(await details(order(42 as unknown as string))).toEqual([{ path: 'orderId', message: expect.stringContaining('string') }]);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expect(await details(order('o', { metadata: many }))).toEqual([{ path: 'metadata', message: 'must have at most 50 keys' }]);
    expect(await details(order('o', { metadata: { ['k'.repeat(41)]: 'v' } }))).toEqual([{ path: `metadata.${'k'.repeat(41)}`, message: 'keys must be at most 40 characters' }]);
    expect(await details(order('o', { metadata: { k: 'v'.repeat(501) } }))).toEqual([{ path: 'metadata.k', message: 'must be at most 500 characters' }]);
    expect(await details(order('o', { metadata: { k: 5 } }))).toEqual([{ path: 'metadata.k', message: expect.stringContaining('string') }]);
    expect(await details(order('o', { metadata: { k: { nested: 'x' } } }))).toEqual([{ path: 'metadata.k', message: expect.stringContaining('string') }]);
    expect(await details(order('o', { metadata: ['a'] }))).toEqual([{ path: 'metadata', message: expect.any(String) }]);
    const proto = await server.request('POST', '/api/invoices/v1/regular', {
      token: m.publicToken,
      headers: { 'content-type': 'application/json' },
      body: '{"invoiceCurrency":"usd","items":[{"name":"x","price":1}],"metadata":{"__proto__":"x"}}',
    });
    expect(proto.status).toBe(422);
    // At the limits exactly: accepted.
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, '0')}${'k'.repeat(38)}`, 'v'.repeat(500)]));
    const ok = await create(m.publicToken, order('o'.repeat(128), { metadata: full }));
    expect(ok.status).toBe(201);
    expect(ok.body.metadata).toEqual(full);
  });

  it('a create repeating the orderId of an open invoice answers it (200, Idempotent-Replayed), another body is a 409, a final one frees the orderId', async () => {
    const m = await server.merchant();
    const first = await create(m.publicToken, order('B-7', { metadata: { cart: '9' } }));
    expect(first.status).toBe(201);
    const again = await create(m.publicToken, order('B-7', { metadata: { cart: '9' } }));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);

    const other = await create(m.publicToken, order('B-7', { items: [{ name: 'Order', price: 101 }] }));
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'ORDER_ID_IN_USE', details: [{ path: 'orderId', message: `is used by the open invoice ${first.body.id}` }] });
    expect(other.body.error.message).toContain(first.body.id);
    expect((await create(m.publicToken, order('B-7'))).status).toBe(409);

    // Still open while pending.
    expect((await proceed(first.body.id)).status).toBe(200);
    expect((await create(m.publicToken, order('B-7', { metadata: { cart: '9' } }))).body.id).toBe(first.body.id);
    // Another merchant, and the merchant's live mode, have their own orders.
    const stranger = await server.merchant();
    expect((await create(stranger.publicToken, order('B-7'))).status).toBe(201);
    // Closed (expired): final, so the order gets a new invoice.
    await server.request('POST', '/api/sandbox/clock/advance', { token: m.publicToken, json: { minutes: 31 } });
    expect((await read(first.body.id)).status).toBe('closed');
    const next = await create(m.publicToken, order('B-7', { items: [{ name: 'Order', price: 101 }] }));
    expect(next.status).toBe(201);
    expect(next.body.id).not.toBe(first.body.id);

    // With an Idempotency-Key as well: the order's invoice answers, whatever the key.
    const keyed = await create(m.publicToken, order('B-7', { items: [{ name: 'Order', price: 101 }] }), { 'idempotency-key': 'k-1' });
    expect(keyed.status).toBe(200);
    expect(keyed.body.id).toBe(next.body.id);
  });

  it('concurrent creates of one order make one invoice; the others answer it', async () => {
    const m = await server.merchant();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create(m.publicToken, order('RACE-1'), i % 2 ? { 'idempotency-key': `race-${i}` } : {})));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await server.app.db.prisma.invoice.count({ where: { companyId: m.tenantId, orderId: 'RACE-1' } })).toBe(1);
    expect(await server.app.db.prisma.event.count({ where: { subjectId: results[0]!.body.id } })).toBe(1);
  });

  it('every invoice webhook carries orderId and metadata after the spec fields; an accepted short payment says so', async () => {
    const { m, r } = await merchantWithReceiver(server);
    const token = m.publicToken;
    const metadata = { customer: 'c_1', note: 'gift' };
    const created = await create(token, order('W-1', { metadata }));
    const id = created.body.id as string;
    await proceed(id);
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: '60', confirmations: 19 } });
    expect((await read(id)).status).toBe('wrong');
    const accepted = await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ status: 'done', settlement: 'accepted_short', acceptedAt: expect.stringMatching(/Z$/) });
    expect((await read(id)).settlement).toBe('accepted_short');

    const plain = await create(token, { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] });
    await proceed(plain.body.id);
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: plain.body.id, amount: '50', confirmations: 19 } });
    const refunded = await server.request('POST', `/api/invoices/v1/regular/${plain.body.id}/refund`, { token, json: { address: TRON } });
    expect(refunded.body).toMatchObject({ status: 'refunded', settlement: 'refunded' });
    expect(refunded.body).not.toHaveProperty('acceptedAt');

    await r.waitFor((got) => got.length >= 8);
    const bodies = r.received.map((x) => x.body);
    const spec = (invoiceId: string, status: string, message: string) => `{"invoiceId":"${invoiceId}","status":"${status}","message":"${message}"`;
    const extras = `,"orderId":"W-1","metadata":{"customer":"c_1","note":"gift"}`;
    expect(bodies).toEqual([
      `${spec(id, 'created', 'Invoice created')}${extras}}`,
      `${spec(id, 'pending', "User started payment process, but hasn't paid yet")}${extras}}`,
      `${spec(id, 'wrong', 'The payment amount is lower than the amount stated on the invoice')}${extras}}`,
      `${spec(id, 'done', 'Invoice paid')}${extras},"settlement":"accepted_short"}`,
      `${spec(plain.body.id, 'created', 'Invoice created')}}`,
      `${spec(plain.body.id, 'pending', "User started payment process, but hasn't paid yet")}}`,
      `${spec(plain.body.id, 'wrong', 'The payment amount is lower than the amount stated on the invoice')}}`,
      `${spec(plain.body.id, 'refunded', 'Invoice refunded')},"settlement":"refunded"}`,
    ]);
    expect(r.received.every((x) => x.specSignatureValid && x.standardSignatureValid)).toBe(true);
  });

  it('a late payment to a closed invoice, accepted, is accepted_late', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    const created = await create(token, order('L-1'));
    await proceed(created.body.id);
    await server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes: 31 } });
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: created.body.id, amount: '101', confirmations: 19 } });
    const accepted = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/accept`, { token });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toMatchObject({ status: 'done', orderId: 'L-1', settlement: 'accepted_late' });
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: created.body.id, type: 'invoice.done' } });
    expect(events.map((e) => e.payload)).toEqual([{ invoiceId: created.body.id, status: 'done', message: 'Invoice paid', orderId: 'L-1', settlement: 'accepted_late' }]);
  });
});
