// Restricted API keys through the real server: made, listed and revoked over REST and GraphQL; scopes enforced on
// REST routes, GraphQL fields and subscriptions (403 FORBIDDEN naming the scope); no key grants more than its maker
// holds; a revoked or expired key is refused at once and its live connections end within 2 s, also on a second
// instance; lastUsedAt at most once a minute; tokens never stored.
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES } from '../support/databases.ts';
import { liveSocket, sseStream, until } from '../support/live.ts';
import { sampleInvoice, useServer } from '../support/server.ts';
import { makeKey } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const WITHDRAW = { items: [{ amount: 10, to: TRON, asset: 'trc20usdt' }] };
const RULE = { assets: { trc20usdt: { amount: 100, isEnabled: true, withdrawalAddress: TRON, withdrawalTag: null } } };
const EVENTS = 'subscription { invoiceEvents { id } }';
const WITHIN_MS = 2_000;

const forbidden = (res: { status: number; body: any }, scope: string) => {
  expect(res.status).toBe(403);
  expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining(scope) });
};

describe.each(DATABASES)('API keys on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('a key is made with its scopes, shown once, listed without its token, stored only as a hash; rk_test_ in test mode, rk_live_ in live mode', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:write', 'invoices:read'], { expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(key).toEqual({
      id: expect.any(String),
      name: 'key invoices:write invoices:read',
      scopes: ['invoices:read', 'invoices:write'],
      token: expect.stringMatching(/^rk_test_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.stringMatching(/Z$/),
      expiresAt: '2099-01-01T00:00:00.000Z',
      lastUsedAt: null,
    });
    const list = await server.request('GET', '/api/company/api-keys', { token: m.publicToken });
    expect(list.status).toBe(200);
    expect(list.body.apiKeys).toEqual([{ id: key.id, name: key.name, scopes: key.scopes, createdAt: key.createdAt, expiresAt: key.expiresAt, lastUsedAt: null }]);
    expect(list.text).not.toContain(key.token);
    const row = await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(key.token.slice(8));

    const live = await server.liveMerchant();
    const liveKey = await makeKey(server, live.publicToken, ['invoices:read']);
    expect(liveKey.token).toMatch(/^rk_live_/);
    // Each mode lists its own keys only.
    expect((await server.request('GET', '/api/company/api-keys', { token: live.publicToken })).body.apiKeys.map((k: { id: string }) => k.id)).toEqual([liveKey.id]);
    const viewer = await server.graphql('{ viewer { mode } }', {}, liveKey.token);
    expect(viewer.body.data.viewer.mode).toBe('LIVE');
  });

  it('an invoices:write key creates invoices and gets 403 naming the scope on withdraw, rule changes, the webhook URL and exports', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:write']);
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: key.token, json: sampleInvoice() });
    expect(created.status, created.text).toBe(201);
    forbidden(await server.request('POST', '/api/transactions/withdraw', { token: key.token, json: WITHDRAW }), 'payouts:write');
    forbidden(await server.request('PATCH', '/api/company/auto-withdrawals', { token: key.token, json: RULE }), 'payouts:write');
    forbidden(await server.request('PUT', '/api/company/settings/webhook-url', { token: key.token, json: { webHookUrl: 'https://evil.example/hooks' } }), 'settings:write');
    forbidden(await server.request('GET', '/api/company/exports/ledger.csv?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z', { token: key.token }), 'exports:read');
    forbidden(await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`, { token: key.token }), 'invoices:read');
    forbidden(await server.request('POST', '/api/company/api-keys', { token: key.token, json: { name: 'x', scopes: ['invoices:write'] } }), 'keys:write');
    // Without a token the public read still works; the webhook URL did not change.
    expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).status).toBe(200);
    expect((await server.request('GET', '/api/company/settings/webhook-url', { token: m.publicToken })).body.webHookUrl ?? null).toBeNull();

    // GraphQL: per field.
    const gql = await server.graphql('mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { __typename } }', { i: { invoiceCurrency: 'USD', items: [{ name: 'Tea', price: '2' }] } }, key.token);
    expect(gql.body.data?.createInvoice.__typename, gql.text).toBe('CreateInvoiceSuccess');
    expect((await server.graphql('{ viewer { mode } }', {}, key.token)).body.data.viewer.mode).toBe('TEST');
    const refused = await server.graphql('{ withdrawals(first: 1) { totalCount } }', {}, key.token);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: ['withdrawals'], message: 'This API key lacks the scope payouts:read', extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    const hook = await server.graphql('mutation { setWebhookUrl(input: { url: "https://evil.example/h" }) { __typename } }', {}, key.token);
    expect(hook.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('settings:write'), extensions: { code: 'FORBIDDEN' } });
  });

  it('store settings and payment links: a read-only key reads them and gets 403 naming the scope on every change (REST and GraphQL)', async () => {
    const m = await server.merchant({ name: 'Scoped Store' });
    const link = await server.request('POST', '/api/payment-links', { token: m.publicToken, json: { name: 'L', invoiceCurrency: 'usd', items: [{ name: 'Tea', price: '2' }] } });
    expect(link.status, link.text).toBe(201);
    const reader = await makeKey(server, m.publicToken, ['invoices:read', 'payouts:read', 'deposits:read', 'settings:read', 'exports:read']);
    expect((await server.request('GET', '/api/company/settings/store', { token: reader.token })).body.name).toBe('Scoped Store');
    expect((await server.request('GET', `/api/payment-links/${link.body.id}`, { token: reader.token })).body.id).toBe(link.body.id);
    expect((await server.request('GET', '/api/payment-links', { token: reader.token })).body.paymentLinks).toHaveLength(1);
    forbidden(await server.request('PATCH', '/api/company/settings/store', { token: reader.token, json: { name: 'Hijacked' } }), 'settings:write');
    forbidden(await server.request('POST', '/api/payment-links', { token: reader.token, json: { name: 'L', invoiceCurrency: 'usd', items: [{ name: 'Tea', price: '2' }] } }), 'invoices:write');
    forbidden(await server.request('POST', `/api/payment-links/${link.body.id}/deactivate`, { token: reader.token }), 'invoices:write');
    for (const [mutation, scope] of [
      ['mutation { updateStoreSettings(input: { name: "Hijacked" }) { __typename } }', 'settings:write'],
      ['mutation { createPaymentLink(input: { name: "L", invoiceCurrency: USD, items: [{ name: "Tea", price: "2" }] }) { __typename } }', 'invoices:write'],
      [`mutation { deactivatePaymentLink(input: { id: "${link.body.id}" }) { __typename } }`, 'invoices:write'],
    ] as const) {
      const res = await server.graphql(mutation, {}, reader.token);
      expect(res.body.errors?.[0], mutation).toMatchObject({ message: expect.stringContaining(scope), extensions: { code: 'FORBIDDEN' } });
    }
    // Without settings:read the settings are not readable; without invoices:read the links are not.
    const writer = await makeKey(server, m.publicToken, ['invoices:write']);
    forbidden(await server.request('GET', '/api/company/settings/store', { token: writer.token }), 'settings:read');
    forbidden(await server.request('GET', '/api/payment-links', { token: writer.token }), 'invoices:read');
    expect((await server.graphql('{ storeSettings { name } }', {}, writer.token)).body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect((await server.graphql(`{ paymentLink(id: "${link.body.id}") { name } }`, {}, writer.token)).body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect((await server.request('GET', `/api/payment-links/${link.body.id}`, { token: m.publicToken })).body.active).toBe(true);
    expect((await server.request('GET', '/api/company/settings/store', { token: m.publicToken })).body.name).toBe('Scoped Store');
  });

  it('a payouts:read key lists withdrawals and balances but cannot withdraw, over REST and GraphQL; node(id:) hides what a key may not read', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['payouts:read']);
    const list = await server.request('GET', '/api/transactions/withdrawals', { token: key.token });
    expect(list.status, list.text).toBe(200);
    expect((await server.request('GET', '/api/company/balances', { token: key.token })).status).toBe(200);
    forbidden(await server.request('POST', '/api/transactions/withdraw', { token: key.token, json: WITHDRAW }), 'payouts:write');
    forbidden(await server.request('POST', '/api/invoices/v1/regular', { token: key.token, json: sampleInvoice() }), 'invoices:write');
    const gql = await server.graphql('{ withdrawals(first: 5) { totalCount } }', {}, key.token);
    expect(gql.body.data.withdrawals.totalCount).toBe(0);
    const w = await server.graphql(`mutation { withdraw(input: { items: [{ amount: "10", to: "${TRON}", asset: TRC20USDT }] }) { __typename } }`, {}, key.token);
    expect(w.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('payouts:write'), extensions: { code: 'FORBIDDEN' } });

    // A key without settings:read finds no ApiKey node, as if it were another merchant's.
    const listed = await server.graphql('{ apiKeys { id name } }', {}, m.publicToken);
    const nodeId = listed.body.data.apiKeys[0].id as string;
    expect((await server.graphql('query($id: ID!) { node(id: $id) { id } }', { id: nodeId }, m.publicToken)).body.data.node).toEqual({ id: nodeId });
    expect((await server.graphql('query($id: ID!) { node(id: $id) { id } }', { id: nodeId }, key.token)).body.data.node).toBeNull();
  });

  it('subscriptions follow the read scopes: invoiceEvents needs invoices:read over graphql-ws and SSE', async () => {
    const m = await server.merchant();
    const writer = await makeKey(server, m.publicToken, ['invoices:write']);
    const reader = await makeKey(server, m.publicToken, ['invoices:read']);
    const sse = await sseStream(server.url, { query: EVENTS, token: writer.token });
    await sse.ended;
    expect(JSON.stringify(sse.messages)).toContain('invoices:read');
    const socket = liveSocket(server.url, { token: writer.token });
    expect(await socket.accepted).toBe('ack');
    socket.subscribe('a', EVENTS);
    socket.subscribe('b', 'subscription { withdrawalEvents { uid } }');
    const ok = liveSocket(server.url, { token: reader.token });
    expect(await ok.accepted).toBe('ack');
    ok.subscribe('a', EVENTS);
    await until(() => socket.errors.has('a') || (socket.nexts.get('a') ?? []).length > 0, 5_000, 'the refusal');
    const refusal = socket.errors.get('a') ?? socket.nexts.get('a')?.[0]?.errors;
    expect(refusal?.[0]).toMatchObject({ message: expect.stringContaining('invoices:read'), extensions: { code: 'FORBIDDEN' } });
    await new Promise((r) => setTimeout(r, 200));
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: writer.token, json: sampleInvoice() });
    await until(() => JSON.stringify(ok.nexts.get('a') ?? []).includes(created.body.id), 10_000, 'the reader to see the invoice');
    socket.close();
    ok.close();
  });

  it('no key grants a scope its maker lacks; bad input is a 422 naming the field; unknown keys are 404', async () => {
    const m = await server.merchant();
    const admin = await makeKey(server, m.publicToken, ['keys:write', 'invoices:read']);
    forbidden(await server.request('POST', '/api/company/api-keys', { token: admin.token, json: { name: 'more', scopes: ['payouts:write'] } }), 'payouts:write');
    expect((await server.request('POST', '/api/company/api-keys', { token: admin.token, json: { name: 'same', scopes: ['invoices:read'] } })).status).toBe(201);
    for (const [json, path] of [
      [{ name: '', scopes: ['invoices:read'] }, 'name'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['root'] }, 'scopes.0'],
      [{ name: 'x', scopes: ['invoices:read', 'invoices:read'] }, 'scopes'],
      [{ name: 'x', scopes: ['invoices:read'], expiresAt: '2000-01-01T00:00:00Z' }, 'expiresAt'],
      [{ name: 'x'.repeat(101), scopes: ['invoices:read'] }, 'name'],
    ] as const) {
      const res = await server.request('POST', '/api/company/api-keys', { token: m.publicToken, json });
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await server.request('DELETE', '/api/company/api-keys/00000000-0000-4000-8000-000000000000', { token: m.publicToken })).status).toBe(404);
    expect((await server.request('DELETE', '/api/company/api-keys/not-a-uuid', { token: m.publicToken })).status).toBe(404);
    // Another merchant's key is not found.
    const other = await server.merchant();
    expect((await server.request('DELETE', `/api/company/api-keys/${admin.id}`, { token: other.publicToken })).status).toBe(404);
    // GraphQL makes and revokes keys the same way.
    const made = await server.graphql(
      'mutation { createApiKey(input: { name: "gql", scopes: [INVOICES_READ] }) { __typename ... on CreateApiKeySuccess { created { token apiKey { id name scopes } } } } }',
      {},
      m.publicToken,
    );
    const created = made.body.data.createApiKey.created;
    expect(created.token).toMatch(/^rk_test_/);
    expect(created.apiKey.scopes).toEqual(['INVOICES_READ']);
    const revoked = await server.graphql(`mutation { revokeApiKey(input: { id: "${created.apiKey.id}" }) { __typename } }`, {}, m.publicToken);
    expect(revoked.body.data.revokeApiKey.__typename).toBe('RevokeApiKeySuccess');
    expect((await server.graphql('{ viewer { mode } }', {}, created.token)).status).toBe(401);
  });

  it('lastUsedAt is written on use, at most once a minute', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:read', 'settings:read']);
    expect((await server.request('GET', '/api/company/api-keys', { token: key.token })).status).toBe(200);
    const read = async () => (await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
    await until(() => false, 0).catch(() => undefined);
    let first: Date | null = null;
    for (const end = Date.now() + 5_000; !first && Date.now() < end; ) {
      first = await read();
      if (!first) await new Promise((r) => setTimeout(r, 50));
    }
    expect(first).toBeInstanceOf(Date);
    for (let i = 0; i < 3; i++) expect((await server.request('GET', '/api/company/api-keys', { token: key.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await read())?.getTime()).toBe(first!.getTime());
  });

  it('a revoked key is refused at once (REST, GraphQL) and its live connections end within 2 s; other keys go on', async () => {
    const m = await server.merchant();
    const doomed = await makeKey(server, m.publicToken, ['invoices:read', 'invoices:write']);
    const kept = await makeKey(server, m.publicToken, ['invoices:read']);
    expect((await server.request('POST', '/api/invoices/v1/regular', { token: doomed.token, json: sampleInvoice() })).status).toBe(201);
    const socket = liveSocket(server.url, { token: doomed.token });
    expect(await socket.accepted).toBe('ack');
    socket.subscribe('a', EVENTS);
    const stream = await sseStream(server.url, { query: EVENTS, token: doomed.token });
    const keptSocket = liveSocket(server.url, { token: kept.token });
    expect(await keptSocket.accepted).toBe('ack');
    await new Promise((r) => setTimeout(r, 300));
    const res = await server.request('DELETE', `/api/company/api-keys/${doomed.id}`, { token: m.publicToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const at = Date.now();
    const refused = await server.request('POST', '/api/invoices/v1/regular', { token: doomed.token, json: sampleInvoice() });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('API key');
    expect((await server.graphql('{ viewer { mode } }', {}, doomed.token)).status).toBe(401);
    await until(() => socket.closedWith !== null && stream.endedAt !== null, WITHIN_MS, 'the revoked key’s connections to end');
    expect(Date.now() - at).toBeLessThan(WITHIN_MS);
    expect(socket.closedWith?.code).toBe(4403);
    expect(keptSocket.closedWith).toBeNull();
    expect((await server.request('GET', '/api/company/api-keys', { token: m.publicToken })).body.apiKeys.map((k: { id: string }) => k.id)).toEqual([kept.id]);
    expect((await server.request('DELETE', `/api/company/api-keys/${doomed.id}`, { token: m.publicToken })).status).toBe(404);
    keptSocket.close();
  });

  it('an expired key is refused, and a connection it opened ends at its expiry', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:read'], { expiresAt: new Date(Date.now() + 2_500).toISOString() });
    const socket = liveSocket(server.url, { token: key.token });
    expect(await socket.accepted).toBe('ack');
    const stream = await sseStream(server.url, { query: EVENTS, token: key.token });
    expect(stream.status).toBe(200);
    expect((await server.request('GET', '/api/sandbox/clock', { token: key.token })).status).toBe(200);
    await until(() => socket.closedWith !== null && stream.endedAt !== null, 6_000, 'the expired key’s connections to end');
    expect(socket.closedWith?.code).toBe(4403);
    expect((await server.request('GET', '/api/sandbox/clock', { token: key.token })).status).toBe(401);
  });
});

describe.runIf(DATABASES.includes('postgres'))('a revoked key on two instances (PostgreSQL)', { timeout: 120_000 }, () => {
  const server = useServer('postgres');
  let second: App | undefined;
  afterAll(async () => second?.stop());

  it('revoked through one instance: the other refuses it at once and ends its live connections within 2 s', async () => {
    const config = loadConfig({ DATABASE_URL: server.databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '3', EVENT_POLL_MS: '10000' });
    second = await startApp(config, createLogger('silent'));
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:read', 'invoices:write']);
    // The other instance has the key in its lookup cache and a live connection of it.
    const onSecond = (path: string) => fetch(`${second!.url}${path}`, { headers: { authorization: `Bearer ${key.token}` } });
    expect((await onSecond('/api/sandbox/clock')).status).toBe(200);
    const socket = liveSocket(second.url, { token: key.token });
    expect(await socket.accepted).toBe('ack');
    socket.subscribe('a', EVENTS);
    await new Promise((r) => setTimeout(r, 300));
    expect((await server.request('DELETE', `/api/company/api-keys/${key.id}`, { token: m.publicToken })).status).toBe(204);
    await until(() => socket.closedWith !== null, WITHIN_MS, 'the connection on the other instance to end');
    expect(socket.closedWith?.code).toBe(4403);
    expect((await onSecond('/api/sandbox/clock')).status).toBe(401);
  });
});
