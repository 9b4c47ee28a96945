import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { INVOICE_STATUS_MESSAGES } from '../../src/invoices/status.ts';
import { RETRY_DELAYS_MS } from '../../src/webhooks/schedule.ts';
import { DATABASES } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_TIMEOUT_MS: '800', WEBHOOK_POLL_MS: '100' };
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

async function merchantWithReceiver(server: TestServer, receivers: Receiver[]) {
  const m = await server.merchant();
  const r = await startReceiver(() => m.secretKey);
  receivers.push(r);
  const set = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: r.url } });
  expect(set.status).toBe(200);
  return { m, r };
}

async function invoice(server: TestServer, token: string) {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
  await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
  return created.body.id as string;
}

const advance = (server: TestServer, token: string, ms: number) =>
  server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes: ms / 60_000 } });

// A send timeout far above any answer time here, so no attempt is retried: the receiver sees each event once.
// WEBHOOK_PIPELINE=1: one attempt per endpoint at a time, so arrival order is event order (with a deeper pipeline
// only the order in which attempts start is promised: docs/webhooks.md, tested in pipeline.test.ts).
describe.each(DATABASES)('webhook payloads and order on %s', (kind) => {
  const server = useServer(kind, { ...ENV, WEBHOOK_TIMEOUT_MS: '15000', WEBHOOK_PIPELINE: '1' });
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('delivers every invoice status with the exact spec payload, both signatures valid, in event order', async () => {
    const { m, r } = await merchantWithReceiver(server, receivers);
    const token = m.publicToken;
    const paid = await invoice(server, token);
    const t = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: paid, amount: '101' } });
    await server.request('POST', `/api/sandbox/transfers/${t.body.id}/confirm`, { token });
    const refunded = await invoice(server, token);
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: refunded, amount: '50', confirmations: 19 } });
    await server.request('POST', `/api/invoices/v1/regular/${refunded}/refund`, { token, json: { address: TRON } });
    const closed = await invoice(server, token);
    await advance(server, token, 31 * 60_000);

    const expected: [string, string][] = [
      [paid, 'created'], [paid, 'pending'], [paid, 'processing'], [paid, 'done'],
      [refunded, 'created'], [refunded, 'pending'], [refunded, 'wrong'], [refunded, 'refunded'],
      [closed, 'created'], [closed, 'pending'], [closed, 'closed'],
    ];
    await r.waitFor((got) => got.length >= expected.length);
    const attempts = await server.request('GET', '/api/company/webhooks/deliveries?limit=100', { token });
    expect(r.received.map((x) => [x.json['invoiceId'], x.json['status']]), JSON.stringify(attempts.body)).toEqual(expected);
    for (const x of r.received) {
      // The spec's payload; the merchant's refund decision adds its documented marker after it (docs/webhooks.md).
      const settlement = x.json['status'] === 'refunded' ? { settlement: 'refunded' } : {};
      expect(x.body).toBe(JSON.stringify({ invoiceId: x.json['invoiceId'], status: x.json['status'], message: INVOICE_STATUS_MESSAGES[x.json['status'] as 'done'], ...settlement }));
      expect(x.headers['content-type']).toBe('application/json');
      expect(x.headers['signature']).toMatch(/^[0-9a-f]{128}$/);
      expect(x.specSignatureValid).toBe(true);
      expect(x.standardSignatureValid).toBe(true);
      expect(Math.abs(Number(x.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(3 * 3600);
    }
    // webhook-id is the event id: unique per event.
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(expected.length);
    // Late payments and unexpected assets are not pushed (only spec payloads are), but they are in the feed.
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: closed, amount: '5', confirmations: 19 } });
    const feed = await server.request('GET', '/api/company/events?limit=100', { token });
    expect(feed.body.events.map((e: { type: string }) => e.type)).toContain('invoice.late_payment');
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received).toHaveLength(expected.length);
  });
});

describe.each(DATABASES)('webhook delivery on %s', (kind) => {
  const server = useServer(kind, ENV);
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('retries 500s, timeouts, refused connections and redirects on schedule, then delivers once the endpoint recovers', async () => {
    for (const fault of ['error500', 'hang', 'refused', 'redirect'] as const) {
      const { m, r } = await merchantWithReceiver(server, receivers);
      const token = m.publicToken;
      if (fault === 'refused') {
        // A port nobody listens on.
        const probe = net.createServer();
        await new Promise<void>((res) => probe.listen(0, '127.0.0.1', res));
        const port = (probe.address() as net.AddressInfo).port;
        await new Promise<void>((res) => probe.close(() => res()));
        await server.request('PUT', '/api/company/settings/webhook-url', { token, json: { webHookUrl: `http://127.0.0.1:${port}/x` } });
      } else {
        r.behaviour = fault;
      }
      const id = (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } })).body.id;
      const log = async () => (await server.request('GET', '/api/company/webhooks/deliveries', { token })).body.deliveries[0];
      await expect.poll(async () => (await log())?.attempts, { timeout: 8000 }).toBe(1);
      const first = await log();
      expect(first.status).toBe('pending');
      expect(first.eventId).toBeTruthy();
      const firstAttempt = first.attemptLog[0];
      if (fault === 'error500') expect(firstAttempt).toMatchObject({ statusCode: 500, responseBody: 'boom' });
      if (fault === 'redirect') expect(firstAttempt.statusCode).toBe(302);
      if (fault === 'hang') expect(firstAttempt.error).toMatch(/timed out/);
      if (fault === 'refused') expect(firstAttempt.error).toMatch(/ECONNREFUSED/);
      // Not before its time: 5 s (+ up to 10% jitter) after the failure.
      const nextAt = Date.parse(first.nextAttemptAt) - Date.parse(firstAttempt.startedAt);
      expect(nextAt).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]!);
      expect(nextAt).toBeLessThanOrEqual(RETRY_DELAYS_MS[0]! * 1.1 + firstAttempt.durationMs + 50);

      // Recover, move the test clock past the retry time: delivered.
      r.behaviour = 'ok';
      if (fault === 'refused') await server.request('PUT', '/api/company/settings/webhook-url', { token, json: { webHookUrl: r.url } });
      await advance(server, token, 6_000);
      await expect.poll(async () => (await log()).status, { timeout: 8000 }).toBe('delivered');
      const done = await log();
      // The retry went to the company's current URL (for `refused`, the fixed one).
      expect(done.url).toBe(r.url);
      expect(done.attempts).toBe(2);
      expect(done.attemptLog.map((a: { statusCode: number | null }) => a.statusCode).at(-1)).toBe(200);
      expect(r.delivered().filter((x) => x.json['invoiceId'] === id)).toHaveLength(1);
    }
  });

  it('gives up after about three days, and a failed delivery can be redelivered with the same webhook-id', async () => {
    const { m, r } = await merchantWithReceiver(server, receivers);
    const token = m.publicToken;
    r.behaviour = 'error500';
    const since = new Date(Date.now() - 1000).toISOString();
    await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    const log = async () => (await server.request('GET', '/api/company/webhooks/deliveries', { token })).body.deliveries[0];
    await expect.poll(async () => (await log())?.attempts, { timeout: 8000 }).toBe(1);
    for (const delay of RETRY_DELAYS_MS) {
      const before = (await log()).attempts;
      await advance(server, token, delay * 1.1 + 1000);
      await expect.poll(async () => (await log()).attempts, { timeout: 8000 }).toBe(before + 1);
    }
    const failed = await log();
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toBe(RETRY_DELAYS_MS.length + 1);
    const span = Date.parse(failed.attemptLog.at(-1).startedAt) - Date.parse(failed.attemptLog[0].startedAt);
    expect(span / 3_600_000).toBeGreaterThan(70);
    expect(span / 3_600_000).toBeLessThan(80);
    const webhookIds = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(webhookIds.size).toBe(1);

    r.behaviour = 'ok';
    const redelivered = await server.request('POST', `/api/company/webhooks/events/${failed.eventId}/redeliver`, { token });
    expect(redelivered.status).toBe(202);
    await r.waitFor(() => r.delivered().length === 1);
    expect(r.delivered()[0]!.headers['webhook-id']).toBe(failed.eventId);

    // redeliver-failed skips events already redelivered.
    const bulk = await server.request('POST', '/api/company/webhooks/redeliver-failed', { token, json: { since } });
    expect(bulk.body).toEqual({ redelivered: 0 });
    expect((await server.request('POST', '/api/company/webhooks/redeliver-failed', { token, json: { since: 'yesterday' } })).status).toBe(422);
    expect((await server.request('POST', '/api/company/webhooks/events/nope/redeliver', { token })).status).toBe(404);
  });

  it('one merchant’s dead endpoint does not slow another merchant’s deliveries', async () => {
    const slow = await merchantWithReceiver(server, receivers);
    const fast = await merchantWithReceiver(server, receivers);
    slow.r.behaviour = 'hang';
    for (let i = 0; i < 5; i++) await server.request('POST', '/api/invoices/v1/regular', { token: slow.m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const sent = Date.now();
      await server.request('POST', '/api/invoices/v1/regular', { token: fast.m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
      await fast.r.waitFor((got) => got.length === i + 1, 5000);
      latencies.push(fast.r.received[i]!.at - sent);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[5]!;
    const max = latencies.at(-1)!;
    console.log(`healthy endpoint latency while another hangs (timeout 800 ms): p50 ${p50} ms, max ${max} ms`);
    // Far below one timeout of the hanging endpoint.
    expect(max).toBeLessThan(800);
  });

  it('keeps a delivery log with attempts and offers an ordered catch-up feed', async () => {
    const { m } = await merchantWithReceiver(server, receivers);
    const token = m.publicToken;
    for (let i = 0; i < 3; i++) await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    await expect.poll(async () => (await server.request('GET', '/api/company/webhooks/deliveries?status=delivered', { token })).body.deliveries.length, { timeout: 8000 }).toBe(3);
    const page1 = await server.request('GET', '/api/company/webhooks/deliveries?limit=2', { token });
    expect(page1.body.deliveries).toHaveLength(2);
    expect(page1.body.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, eventType: 'invoice.created' });
    expect(page1.body.deliveries[0].attemptLog[0]).toMatchObject({ attempt: 1, statusCode: 200, responseBody: 'thanks', error: null });
    const page2 = await server.request('GET', `/api/company/webhooks/deliveries?limit=2&after=${page1.body.nextCursor}`, { token });
    expect(page2.body.deliveries).toHaveLength(1);
    expect(page2.body.nextCursor).toBeNull();
    const one = await server.request('GET', `/api/company/webhooks/deliveries/${page1.body.deliveries[0].id}`, { token });
    expect(one.body.id).toBe(page1.body.deliveries[0].id);
    const other = await server.merchant();
    expect((await server.request('GET', `/api/company/webhooks/deliveries/${page1.body.deliveries[0].id}`, { token: other.publicToken })).status).toBe(404);

    const feed1 = await server.request('GET', '/api/company/events?limit=2', { token });
    expect(feed1.body.events.map((e: { type: string }) => e.type)).toEqual(['invoice.created', 'invoice.created']);
    expect(feed1.body.events[0].payload).toEqual({ invoiceId: expect.any(String), status: 'created', message: 'Invoice created' });
    const feed2 = await server.request('GET', `/api/company/events?after=${feed1.body.nextCursor}`, { token });
    expect(feed2.body.events).toHaveLength(1);
    const feed3 = await server.request('GET', `/api/company/events?after=${feed2.body.nextCursor}`, { token });
    expect(feed3.body).toEqual({ events: [], nextCursor: feed2.body.nextCursor });
    expect((await server.request('GET', '/api/company/events?after=abc', { token })).status).toBe(422);

    const gql = await server.graphql(
      '{ webhookDeliveries(first: 1, filter: { status: [DELIVERED] }) { totalCount nodes { id status eventType attemptLog { id statusCode } } pageInfo { hasNextPage endCursor } } }',
      {},
      token,
    );
    const connection = gql.body.data.webhookDeliveries;
    expect(connection.nodes).toEqual([{ id: expect.any(String), status: 'DELIVERED', eventType: 'INVOICE_CREATED', attemptLog: [{ id: expect.any(String), statusCode: 200 }] }]);
    expect(connection.totalCount).toBe(3);
    expect(connection.pageInfo.hasNextPage).toBe(true);
    const next = await server.graphql('query($after: String) { webhookDeliveries(first: 5, after: $after) { nodes { id } pageInfo { hasNextPage } } }', { after: connection.pageInfo.endCursor }, token);
    expect(next.body.data.webhookDeliveries.nodes).toHaveLength(2);
    expect(next.body.data.webhookDeliveries.pageInfo.hasNextPage).toBe(false);
    const none = await server.graphql('{ webhookDeliveries(filter: { status: [FAILED] }) { totalCount } }', {}, token);
    expect(none.body.data.webhookDeliveries.totalCount).toBe(0);
    // The delivery is a Node: its global id refetches it for its merchant and is null for anyone else.
    const nodeQuery = 'query($id: ID!) { node(id: $id) { __typename ... on WebhookDelivery { status } } }';
    expect((await server.graphql(nodeQuery, { id: connection.nodes[0].id }, token)).body.data.node).toEqual({ __typename: 'WebhookDelivery', status: 'DELIVERED' });
    expect((await server.graphql(nodeQuery, { id: connection.nodes[0].id }, other.publicToken)).body.data.node).toBeNull();
    expect((await server.graphql(nodeQuery, { id: connection.nodes[0].id })).body.data.node).toBeNull();
  });

  it('sends a signed test event on demand', async () => {
    const { m, r } = await merchantWithReceiver(server, receivers);
    const res = await server.request('POST', '/api/company/settings/webhook-url/test', { token: m.publicToken });
    expect(res.body).toMatchObject({ ok: true, statusCode: 200, url: r.url });
    expect(r.received[0]!.json['type']).toBe('test');
    expect(r.received[0]!.specSignatureValid).toBe(true);
    expect(r.received[0]!.standardSignatureValid).toBe(true);
    const gql = await server.graphql('mutation { sendTestWebhook { __typename ... on SendTestWebhookSuccess { result { ok statusCode } } } }', {}, m.publicToken);
    expect(gql.body.data.sendTestWebhook.result).toEqual({ ok: true, statusCode: 200 });
    const none = await server.merchant();
    expect((await server.request('POST', '/api/company/settings/webhook-url/test', { token: none.publicToken })).status).toBe(422);
  });
});

describe.each(DATABASES)('webhook URL validation and the private-address guard on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_TIMEOUT_MS: '800', WEBHOOK_POLL_MS: '100' });

  it('accepts http(s) URLs only, without credentials, never to private IP literals', async () => {
    const m = await server.merchant();
    const put = (webHookUrl: unknown) => server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl } });
    const nonPublic = [
      'http://127.0.0.1/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://169.254.169.254/latest', 'http://[::ffff:127.0.0.1]/x',
      'http://[64:ff9b::7f00:1]/x', 'http://[2002:7f00:1::1]/x', 'http://[::7f00:1]/x', 'http://[::ffff:0:7f00:1]/x', 'http://[fec0::1]/x',
      'http://[100::1]/x', 'http://192.0.2.1/x', 'http://198.51.100.1/x', 'http://203.0.113.1/x', 'http://2130706433/x', 'http://0x7f.1/x',
    ];
    for (const bad of ['ftp://example.com/x', 'https://user:pw@example.com/x', 'not a url', ...nonPublic, 42]) {
      const res = await put(bad);
      expect(res.status, String(bad)).toBe(422);
      // A developer pointing at a local shop learns the operator setting from the refusal itself.
      if (nonPublic.includes(bad as string)) expect(JSON.stringify(res.body), String(bad)).toContain('WEBHOOK_ALLOW_PRIVATE=1');
    }
    expect((await put('https://merchant.example/hooks')).body).toEqual({ webHookUrl: 'https://merchant.example/hooks' });
    expect((await server.request('GET', '/api/company/settings/webhook-url', { token: m.publicToken })).body).toEqual({ webHookUrl: 'https://merchant.example/hooks' });
    expect((await put(null)).body).toEqual({ webHookUrl: null });
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { json: { webHookUrl: null } })).status).toBe(401);
  });

  it('checks the resolved address at connect time', async () => {
    const m = await server.merchant();
    const r = await startReceiver(() => m.secretKey);
    try {
      // A host name passes validation, but resolves to loopback: the connection is refused by the guard.
      const url = `http://localhost:${r.port}/webhooks`;
      expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: url } })).status).toBe(200);
      const test = await server.request('POST', '/api/company/settings/webhook-url/test', { token: m.publicToken });
      expect(test.body.ok).toBe(false);
      expect(test.body.error).toMatch(/non-public address/);
      expect(test.body.error).toContain('WEBHOOK_ALLOW_PRIVATE=1');
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
    }
  });
});
