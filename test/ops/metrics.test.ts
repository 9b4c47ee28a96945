// /metrics as Prometheus scrapes it: after a sandbox payment with a webhook receiver, the requests by route template
// and status, the invoice transitions, the webhook outcomes and the queue gauges have exactly the expected series;
// the public listener wants METRICS_TOKEN (404 when none is configured); the admin listener serves it too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, type AdminServer } from '../../src/admin/server.ts';
import { declared } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually, fund } from '../support/funding.ts';
import { parsePrometheus, sampleValue, seriesOf, type PromFamily } from '../support/prometheus.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const METRICS_TOKEN = 'scrape-token-0123456789abcdefghij';
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ADMIN_TOKEN = 'operator-token-0123456789abcdefghij';

async function scrape(server: TestServer, token = METRICS_TOKEN): Promise<{ text: string; families: Map<string, PromFamily>; contentType: string | null }> {
  const res = await server.request('GET', '/metrics', { token });
  expect(res.status, res.text).toBe(200);
  return { text: res.text, families: parsePrometheus(res.text), contentType: res.headers.get('content-type') };
}

/** Every series but the scrapes' own (their number depends on how often a test polled). */
const withoutScrapes = (series: Record<string, number>) => Object.fromEntries(Object.entries(series).filter(([k]) => !k.includes('route=/metrics')));

describe.each(DATABASES)('/metrics on %s', (kind) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-metrics-'));
  const server = useServer(kind, { METRICS_TOKEN, ADMIN_TOKEN, DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  let receiver: Receiver | undefined;
  let admin: AdminServer | undefined;
  beforeAll(async () => {
    admin = await startAdminServer(server.app);
  });
  afterAll(async () => {
    await receiver?.close();
    await admin?.stop();
    admin?.releaseStateFile();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('after a sandbox payment shows its requests by route template, the invoice transitions and the webhook deliveries', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    receiver = await startReceiver(() => m.secretKey);
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token, json: { webHookUrl: receiver.url } })).status).toBe(200);
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    expect(proceeded.status).toBe(200);
    const transfer = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: proceeded.body.paymentDetails.amount } });
    expect(transfer.status).toBe(201);
    const confirmed = await server.request('POST', `/api/sandbox/transfers/${transfer.body.id}/confirm`, { token });
    expect(confirmed.status).toBe(200);
    // A route with another status, and paths no route takes.
    expect((await server.request('GET', '/api/invoices/v1/regular/no-such-invoice')).status).toBe(404);
    expect((await server.request('GET', `/api/nothing/${id}`)).status).toBe(404);
    expect((await server.request('DELETE', `/api/nothing/${id}`)).status).toBe(404);
    await receiver.waitFor((got) => got.length >= 4);
    expect(receiver.received.map((r) => r.json['status'])).toEqual(['created', 'pending', 'processing', 'done']);

    // Counted once the attempt's record commits, a moment after the receiver answered.
    await expect.poll(async () => sampleValue((await scrape(server)).families, 'payrail_webhook_delivery_outcomes_total', { outcome: 'delivered', mode: 'test' }), { timeout: 10_000 }).toBe(4);
    const { text, families, contentType } = await scrape(server);
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');

    expect(withoutScrapes(seriesOf(families, 'payrail_http_requests_total'))).toEqual({
      'method=PUT,route=/api/company/settings/webhook-url,status=200': 1,
      'method=POST,route=/api/invoices/v1/regular,status=201': 1,
      'method=POST,route=/api/invoices/v1/regular/:id/proceed,status=200': 1,
      'method=POST,route=/api/sandbox/transfers,status=201': 1,
      'method=POST,route=/api/sandbox/transfers/:id/confirm,status=200': 1,
      'method=GET,route=/api/invoices/v1/regular/:id,status=404': 1,
      'method=GET,route=unmatched,status=404': 1,
      'method=DELETE,route=unmatched,status=404': 1,
    });
    // Never a raw path: ids would make a series each.
    expect(text).not.toContain(id);
    expect(text).not.toContain('no-such-invoice');

    const latency = families.get('payrail_http_request_duration_seconds')!;
    expect(latency.type).toBe('histogram');
    const createBuckets = latency.samples.filter((s) => s.name.endsWith('_bucket') && s.labels['route'] === '/api/invoices/v1/regular');
    expect(createBuckets.map((s) => s.labels['le'])).toEqual(['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    expect(createBuckets.every((s) => s.labels['method'] === 'POST')).toBe(true);
    expect(sampleValue(families, 'payrail_http_request_duration_seconds_count', { method: 'POST', route: '/api/invoices/v1/regular' })).toBe(1);
    expect(sampleValue(families, 'payrail_http_request_duration_seconds_sum', { method: 'POST', route: '/api/invoices/v1/regular' })).toBeGreaterThan(0);

    expect(families.get('payrail_invoice_transitions_total')!.type).toBe('counter');
    expect(seriesOf(families, 'payrail_invoice_transitions_total')).toEqual({
      'status=created': 1, 'status=pending': 1, 'status=processing': 1, 'status=done': 1, 'status=wrong': 0, 'status=refunded': 0, 'status=closed': 0,
    });
    expect(seriesOf(families, 'payrail_withdrawal_transitions_total')).toEqual({ 'status=processing': 0, 'status=done': 0, 'status=rejected': 0 });
    expect(seriesOf(families, 'payrail_deposit_transitions_total')).toEqual({ 'status=processing': 0, 'status=done': 0, 'status=failed': 0, 'status=frozen': 0 });
    expect(seriesOf(families, 'payrail_autoswap_transitions_total')).toEqual({ 'status=done': 0, 'status=failed': 0 });
    // Each subject a feature declares (Declarations.transitions) has its counter; ops/ lists none of them.
    for (const subject of Object.keys(declared.transitions)) expect(families.get(`payrail_${subject}_transitions_total`)?.type, subject).toBe('counter');

    expect(seriesOf(families, 'payrail_webhook_delivery_outcomes_total')).toEqual({
      'mode=test,outcome=delivered': 4, 'mode=test,outcome=retrying': 0, 'mode=test,outcome=given_up': 0, 'mode=test,outcome=no_url': 0,
      'mode=live,outcome=delivered': 0, 'mode=live,outcome=retrying': 0, 'mode=live,outcome=given_up': 0, 'mode=live,outcome=no_url': 0,
    });
    expect(families.get('payrail_webhook_delivery_lag_seconds')!.type).toBe('histogram');
    expect(sampleValue(families, 'payrail_webhook_delivery_lag_seconds_count')).toBe(4);
    expect(sampleValue(families, 'payrail_webhook_delivery_lag_seconds_bucket', { le: '+Inf' })).toBe(4);
    expect(sampleValue(families, 'payrail_webhook_delivery_lag_seconds_bucket', { le: '259200' })).toBe(4);
    expect(sampleValue(families, 'payrail_webhook_attempt_duration_seconds_count')).toBe(4);

    // Read from the database at scrape time: nothing is left waiting.
    expect(seriesOf(families, 'payrail_webhook_deliveries_pending')).toEqual({ 'state=due': 0, 'state=scheduled': 0 });
    expect(seriesOf(families, 'payrail_withdrawals_in_flight')).toEqual({
      'mode=test,stage=queued': 0, 'mode=test,stage=sending': 0, 'mode=test,stage=sent': 0, 'mode=live,stage=queued': 0, 'mode=live,stage=sending': 0, 'mode=live,stage=sent': 0,
    });
    expect(seriesOf(families, 'payrail_refunds_queued')).toEqual({ 'mode=test': 0, 'mode=live': 0 });
    expect(seriesOf(families, 'payrail_metrics_collect_failures_total')).toEqual({});

    expect(seriesOf(families, 'payrail_job_running')).toEqual({
      'job=expiry-sweeper': 1, 'job=refund-sender': 1, 'job=webhook-worker': 1, 'job=webhook-pruner': 1, 'job=withdrawal-sender': 1, 'job=idempotency-pruner': 1, 'job=export-link-pruner': 1, 'job=email-planner': 1, 'job=email-pruner': 1, 'job=autoswap-driver': 1,
    });
    expect(seriesOf(families, 'payrail_database_info')).toEqual({ [`kind=${kind}`]: 1 });
    if (kind === 'postgres') {
      expect(seriesOf(families, 'payrail_db_pool_size')).toEqual({ '': 5 });
      const pool = seriesOf(families, 'payrail_db_pool_connections');
      expect(Object.keys(pool).sort()).toEqual(['state=idle', 'state=in_use']);
      expect(pool['state=idle']! + pool['state=in_use']!).toBeGreaterThanOrEqual(1);
      expect(pool['state=idle']! + pool['state=in_use']!).toBeLessThanOrEqual(5);
      expect(seriesOf(families, 'payrail_db_pool_waiting')).toEqual({ '': 0 });
    } else {
      // The embedded database is one connection inside the process: no pool to report.
      expect(families.has('payrail_db_pool_connections')).toBe(false);
    }
    // Node's process metrics, under their usual names.
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
    expect(families.get('nodejs_eventloop_lag_seconds')?.type).toBe('gauge');
  });

  it('counts withdrawal and deposit status changes once each (auto-withdrawals included), a keyed create once, and shows withdrawals in flight', async () => {
    const transitions = async () => {
      const { families } = await scrape(server);
      return {
        invoice: seriesOf(families, 'payrail_invoice_transitions_total'),
        withdrawal: seriesOf(families, 'payrail_withdrawal_transitions_total'),
        deposit: seriesOf(families, 'payrail_deposit_transitions_total'),
      };
    };
    const before = await transitions();
    const m = await server.merchant();
    const token = m.publicToken;
    await fund(server, token, 'trc20usdt', '100');
    // With an Idempotency-Key (its own transaction): created once; the replay creates and counts nothing.
    for (const status of [201, 200]) {
      const keyed = await server.request('POST', '/api/invoices/v1/regular', { token, headers: { 'idempotency-key': 'metrics-1' }, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
      expect(keyed.status).toBe(status);
    }
    const res = await server.request('POST', '/api/transactions/withdraw', {
      token,
      json: { items: [{ amount: '12.25', tag: '', to: TRON, asset: 'trc20usdt' }, { amount: '7', tag: '', to: TRON, asset: 'trc20usdt' }] },
    });
    expect(res.status, res.text).toBe(200);
    const [done, rejected] = res.body.map((r: { uid: string }) => r.uid) as [string, string];
    // Both sent on chain (a second processing webhook each, but no status change), waiting for confirmations.
    await eventually(
      async () => seriesOf((await scrape(server)).families, 'payrail_withdrawals_in_flight'),
      (inFlight) => inFlight['mode=test,stage=sent'] === 2 && inFlight['mode=test,stage=queued'] === 0 && inFlight['mode=test,stage=sending'] === 0,
    );
    expect((await server.request('POST', `/api/sandbox/withdrawals/${done}/confirm`, { token })).status).toBe(200);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${rejected}/reject`, { token })).status).toBe(200);

    const address = (await server.request('POST', '/api/static-addresses', { token, json: { asset: 'trc20usdt', internalUserId: 'player-1' } })).body;
    const seen = await server.request('POST', '/api/sandbox/transfers', { token, json: { address: address.address, amount: '3' } });
    expect(seen.status).toBe(201);
    expect((await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token, json: {} })).status).toBe(200);
    // A confirmed deposit that crosses an auto-withdrawal threshold: one more withdrawal, in the credit's transaction.
    expect(
      (
        await server.request('PATCH', '/api/company/auto-withdrawals', {
          token,
          json: { assets: { trc20usdt: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } } },
        })
      ).status,
    ).toBe(200);
    expect((await server.request('POST', '/api/sandbox/transfers', { token, json: { address: address.address, amount: '100', confirmations: 19 } })).status).toBe(201);

    const after = await transitions();
    const delta = (of: Record<string, number>, was: Record<string, number>) => Object.fromEntries(Object.entries(of).map(([k, v]) => [k, v - (was[k] ?? 0)]));
    // fund(): created, pending, done; the keyed create once.
    expect(delta(after.invoice, before.invoice)).toEqual({
      'status=created': 2, 'status=pending': 1, 'status=processing': 0, 'status=done': 1, 'status=wrong': 0, 'status=refunded': 0, 'status=closed': 0,
    });
    expect(delta(after.withdrawal, before.withdrawal)).toEqual({ 'status=processing': 3, 'status=done': 1, 'status=rejected': 1 });
    expect(delta(after.deposit, before.deposit)).toEqual({ 'status=processing': 2, 'status=done': 2, 'status=failed': 0, 'status=frozen': 0 });
  });

  it('answers 401 without the token or with another one, and counts those scrapes by status', async () => {
    const none = await server.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body.error).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('METRICS_TOKEN') });
    expect(none.text).not.toContain('payrail_');
    expect((await server.request('GET', '/metrics', { token: `${METRICS_TOKEN}x` })).status).toBe(401);
    expect((await server.request('GET', '/metrics', { token: ADMIN_TOKEN })).status).toBe(401);
    const { families } = await scrape(server);
    expect(sampleValue(families, 'payrail_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(3);
  });

  it('is also served by the admin listener, behind the operator token only', async () => {
    const get = (p: string, token?: string) => fetch(`${admin!.url}${p}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect((await get('/metrics')).status).toBe(401);
    expect((await get('/metrics', METRICS_TOKEN)).status).toBe(401);
    const res = await get('/metrics', ADMIN_TOKEN);
    expect(res.status).toBe(200);
    const families = parsePrometheus(await res.text());
    // The same registry as the public listener's.
    expect(seriesOf(families, 'payrail_invoice_transitions_total')).toEqual(seriesOf((await scrape(server)).families, 'payrail_invoice_transitions_total'));
    expect(seriesOf(families, 'payrail_invoice_transitions_total')['status=done']).toBeGreaterThanOrEqual(1);
    expect((await get('/health/live', ADMIN_TOKEN)).status).toBe(200);
    const ready = await get('/health/ready', ADMIN_TOKEN);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', jobs: 'ok', chains: 'ok', rates: 'ok' } });
    expect((await get('/health/ready')).status).toBe(401);
  });
});

describe('/metrics without METRICS_TOKEN', () => {
  const server = useServer('pglite');

  it('answers 404 on the public listener, as for any path that does not exist; the health endpoints still answer', async () => {
    const res = await server.request('GET', '/metrics', { token: 'anything-at-all-0123456789' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'No route for GET /metrics' });
    expect((await server.request('GET', '/metrics')).status).toBe(404);
    expect((await server.request('GET', '/health/live')).status).toBe(200);
    expect((await server.request('GET', '/health/ready')).status).toBe(200);
  });
});
