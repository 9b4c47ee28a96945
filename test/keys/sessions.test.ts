// Dashboard sessions over HTTP: the token is exchanged for an httpOnly, SameSite=Strict cookie (Secure behind https)
// with the token's scopes; it authenticates only with `Authorization: Session <mode>` (never the cookie alone); it ends
// with its key (revocation ends its live connections too) and at sign-out; the audit log names the session and key.
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import WebSocket from 'ws';
import { rotatePublicToken } from '../../src/companies/service.ts';
import { until } from '../support/live.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { makeKey } from './support.ts';

async function signIn(server: TestServer, token: string) {
  const res = await fetch(`${server.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { status: res.status, body: (await res.json()) as any, setCookie, cookie: setCookie.split(';')[0]! };
}

const gql = (server: TestServer, query: string, headers: Record<string, string>) =>
  fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

describe.each(DATABASES)('dashboard sessions on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('a read-only key signs in to a session with its scopes; the cookie needs the Session header; revoking the key ends the session and its live connection', async () => {
    const m = await server.merchant();
    const key = await makeKey(server, m.publicToken, ['invoices:read', 'settings:read']);
    const session = await signIn(server, key.token);
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ mode: 'test', scopes: ['invoices:read', 'settings:read'], expiresAt: expect.any(String) });
    expect(new Date(session.body.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(session.setCookie).toMatch(/^payrail_session_test=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict$/);
    expect(session.setCookie).not.toContain(key.token);

    const asSession = { cookie: session.cookie, authorization: 'Session test' };
    expect((await gql(server, '{ viewer { mode } viewerScopes }', asSession)).body.data).toEqual({ viewer: { mode: 'TEST' }, viewerScopes: ['INVOICES_READ', 'SETTINGS_READ'] });
    const write = await gql(server, 'mutation { setWebhookUrl(input: { url: "https://x.example/h" }) { __typename } }', asSession);
    expect(write.body.errors[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' }, message: expect.stringContaining('settings:write') });
    // The cookie alone authenticates nothing (a form of another site could send it; it cannot set the header).
    expect((await gql(server, '{ viewer { mode } }', { cookie: session.cookie })).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // The other mode's header finds no session.
    expect((await gql(server, '{ viewer { mode } }', { ...asSession, authorization: 'Session live' })).status).toBe(401);
    expect(await (await fetch(`${server.url}/dashboard/session`, { headers: { cookie: session.cookie } })).json()).toEqual({ modes: ['test'] });

    // A graphql-ws connection authenticates with the session as the dashboard's does: `Session test` and the cookie.
    const ws = liveSocketWithAuthorization(server.url, 'Session test', session.cookie);
    expect(await ws.accepted).toBe('ack');
    expect((await server.request('DELETE', `/api/company/api-keys/${key.id}`, { token: m.publicToken })).status).toBe(204);
    await until(() => ws.closedWith !== null, 2_000, 'the session’s live connection to end');
    expect(ws.closedWith?.code).toBe(4403);
    expect((await gql(server, '{ viewer { mode } }', asSession)).status).toBe(401);
  });

  it('the public token’s session has every scope, ends at sign-out and with a rotation; a bad token counts as a failed authentication', async () => {
    const m = await server.merchant();
    const session = await signIn(server, m.publicToken);
    const asSession = { cookie: session.cookie, authorization: 'Session test' };
    expect((await gql(server, '{ viewerScopes }', asSession)).body.data.viewerScopes).toHaveLength(10);
    // A change made through the session is audited as the session's.
    expect((await gql(server, 'mutation { setWebhookUrl(input: { url: "https://x.example/h" }) { __typename } }', asSession)).body.data.setWebhookUrl.__typename).toBe('SetWebhookUrlSuccess');
    const audit = await server.request('GET', '/api/company/audit-log', { token: m.publicToken });
    expect(audit.body.entries[0]).toMatchObject({ action: 'webhook_url.changed', credential: 'session', apiKey: null });
    const out = await fetch(`${server.url}/dashboard/session`, { method: 'DELETE', headers: { cookie: session.cookie } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('payrail_session_test=; Path=/; Max-Age=0');
    expect((await gql(server, '{ viewer { mode } }', asSession)).status).toBe(401);

    const again = await signIn(server, m.publicToken);
    await rotatePublicToken(server.app.db.prisma, { companyId: m.companyId, mode: 'test' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await gql(server, '{ viewer { mode } }', { cookie: again.cookie, authorization: 'Session test' })).status).toBe(401);

    const bad = await signIn(server, 'pk_test_wrong');
    expect(bad.status).toBe(401);
    expect(bad.setCookie).toBe('');
    expect((await fetch(`${server.url}/dashboard/session`, { method: 'PUT' })).status).toBe(405);
    expect((await fetch(`${server.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token": 5}' })).status).toBe(422);
  });
});

describe('dashboard session cookies behind https', () => {
  const server = useServer('pglite', { PUBLIC_BASE_URL: 'https://payrail.example' });
  it('are Secure', async () => {
    const m = await server.merchant();
    expect((await signIn(server, m.publicToken)).setCookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
  });
});

/** A graphql-ws connection initialised with a raw Authorization value and a Cookie header, as the dashboard's. */
function liveSocketWithAuthorization(baseUrl: string, authorization: string, cookie: string) {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { cookie } });
  const state = { closedWith: null as { code: number } | null, accepted: null as unknown as Promise<'ack' | number> };
  state.accepted = new Promise((resolve) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization } })));
    socket.on('message', (raw) => JSON.parse(String(raw)).type === 'connection_ack' && resolve('ack'));
    socket.on('close', (code) => {
      state.closedWith = { code };
      resolve(code);
    });
  });
  socket.on('error', () => undefined);
  return state;
}
