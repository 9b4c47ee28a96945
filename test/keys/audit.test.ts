// The audit log through the real server: one entry per security- or money-relevant change, in the transaction of
// the change, naming the key (id and name, never a token) and the client address; read newest first in pages over
// REST and GraphQL with settings:read; append-only (the database refuses UPDATE, DELETE and TRUNCATE).
import { describe, expect, it } from 'vitest';
import { rotatePublicToken, rotateSecretKey } from '../../src/companies/service.ts';
import { DATABASES } from '../support/databases.ts';
import { fund } from '../support/funding.ts';
import { sampleInvoice, useServer, type TestServer } from '../support/server.ts';
import { makeKey } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** An invoice paid 1 USDT short of its amount and confirmed: `wrong`, to accept or refund. */
async function wrongInvoice(server: TestServer, token: string): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: sampleInvoice() });
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
  expect(filled.status, filled.text).toBe(200);
  const paid = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: created.body.id, amount: '3', confirmations: 19 } });
  expect(paid.status, paid.text).toBe(201);
  expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status).toBe('wrong');
  return created.body.id as string;
}

async function allEntries(server: TestServer, token: string): Promise<any[]> {
  const out: any[] = [];
  for (let after: string | null = null; ; ) {
    const res = await server.request('GET', `/api/company/audit-log?limit=3${after ? `&after=${after}` : ''}`, { token });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.entries);
    after = res.body.nextCursor;
    if (!after) return out;
  }
}

describe.each(DATABASES)('the audit log on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('records each action with the key and the client address, never a token; newest first in pages; settings:read', async () => {
    const m = await server.merchant();
    const ops = await makeKey(server, m.publicToken, ['payouts:write', 'payouts:read', 'settings:write', 'invoices:write', 'keys:write']);
    const reader = await makeKey(server, m.publicToken, ['settings:read']);
    await fund(server, m.publicToken, 'trc20usdt', '100');

    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: ops.token, json: { webHookUrl: 'https://shop.example/hooks?secret=abc' } })).status).toBe(200);
    const rule = await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: ops.token,
      json: { assets: { trc20usdt: { amount: 500, isEnabled: true, withdrawalAddress: TRON, withdrawalTag: null } } },
    });
    expect(rule.status, rule.text).toBe(200);
    const withdrawn = await server.request('POST', '/api/transactions/withdraw', { token: ops.token, json: { items: [{ amount: '10', to: TRON, asset: 'trc20usdt' }, { amount: '0', to: 'nope', asset: 'trc20usdt' }] } });
    expect(withdrawn.status, withdrawn.text).toBe(422);
    const single = await server.request('POST', '/api/transactions/withdraw', { token: ops.token, json: { items: [{ amount: '10', to: TRON, asset: 'trc20usdt' }] } });
    expect(single.body[0].success, single.text).toBe(true);
    const accepted = await wrongInvoice(server, m.publicToken);
    expect((await server.request('POST', `/api/invoices/v1/regular/${accepted}/accept`, { token: ops.token })).status).toBe(200);
    const refunded = await wrongInvoice(server, m.publicToken);
    const refund = await server.request('POST', `/api/invoices/v1/regular/${refunded}/refund`, { token: m.publicToken, json: { address: TRON } });
    expect(refund.status, refund.text).toBe(200);
    const child = await makeKey(server, ops.token, ['invoices:write']);
    expect((await server.request('DELETE', `/api/company/api-keys/${child.id}`, { token: ops.token })).status).toBe(204);
    const rotated = await rotatePublicToken(server.app.db.prisma, { companyId: m.companyId, mode: 'test' });
    await rotateSecretKey(server.app.db.prisma, { companyId: m.companyId, mode: 'test' });

    // The public token is rotated: the reader key still reads, the old token does not.
    forbiddenFor(await server.request('GET', '/api/company/audit-log', { token: ops.token }));
    const entries = await allEntries(server, reader.token);
    expect(entries.map((e) => e.action)).toEqual([
      'secret_key.rotated',
      'public_token.rotated',
      'api_key.revoked',
      'api_key.created',
      'invoice.refunded',
      'invoice.accepted',
      'withdrawal.requested',
      'auto_withdrawals.changed',
      'webhook_url.changed',
      'api_key.created',
      'api_key.created',
    ]);
    const byAction = (a: string) => entries.filter((e) => e.action === a);
    const opsKey = { id: ops.id, name: ops.name };
    expect(byAction('webhook_url.changed')[0]).toMatchObject({ credential: 'api-key', apiKey: opsKey, clientAddress: expect.stringMatching(/127\.0\.0\.1/), details: { from: null, to: 'https://shop.example/hooks?…' } });
    expect(byAction('auto_withdrawals.changed')[0].details).toEqual({ rules: [{ asset: 'trc20usdt', amount: '500', isEnabled: true, withdrawalAddress: TRON, withdrawalTag: null }] });
    expect(byAction('withdrawal.requested')[0]).toMatchObject({ apiKey: opsKey, details: { items: [{ asset: 'trc20usdt', amount: '10', to: TRON, tag: null, uid: single.body[0].uid, refused: null }] } });
    expect(byAction('invoice.accepted')[0]).toMatchObject({ apiKey: opsKey, details: { invoiceId: accepted } });
    expect(byAction('invoice.refunded')[0]).toMatchObject({ credential: 'public-token', apiKey: null, details: { invoiceId: refunded, to: TRON, asset: 'trc20usdt' } });
    expect(byAction('api_key.revoked')[0]).toMatchObject({ apiKey: opsKey, details: { apiKey: { id: child.id, name: child.name } } });
    expect(byAction('api_key.created')[0]).toMatchObject({ apiKey: opsKey, details: { apiKey: { id: child.id }, scopes: ['invoices:write'] } });
    expect(byAction('public_token.rotated')[0]).toMatchObject({ credential: 'operator', apiKey: null, clientAddress: null, details: { mode: 'test' } });
    // Never a token or secret, anywhere in the log.
    const text = JSON.stringify(entries);
    for (const secret of [ops.token, reader.token, child.token, m.publicToken, rotated.publicToken, m.secretKey, 'secret=abc']) expect(text).not.toContain(secret);

    // GraphQL: the same entries, newest first, settings:read.
    const gql = await server.graphql('{ auditLog(first: 2) { totalCount nodes { action credential apiKeyId apiKeyName clientAddress details } } }', {}, reader.token);
    expect(gql.body.data.auditLog.totalCount).toBe(entries.length);
    expect(gql.body.data.auditLog.nodes.map((n: { action: string }) => n.action)).toEqual(['SECRET_KEY_ROTATED', 'PUBLIC_TOKEN_ROTATED']);
    const denied = await server.graphql('{ auditLog(first: 2) { totalCount } }', {}, ops.token);
    expect(denied.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('settings:read'), extensions: { code: 'FORBIDDEN' } });
    // Another merchant sees none of it; a hostile cursor is a 422.
    const other = await server.merchant();
    expect((await server.request('GET', '/api/company/audit-log', { token: other.publicToken })).body).toEqual({ entries: [], nextCursor: null });
    expect((await server.request('GET', '/api/company/audit-log?after=-1', { token: reader.token })).status).toBe(422);
    expect((await server.request('GET', '/api/company/audit-log?limit=101', { token: reader.token })).status).toBe(422);
  });

  it('is append-only: the database refuses to change or delete an entry, and a failed change leaves no entry', async () => {
    const m = await server.merchant();
    await makeKey(server, m.publicToken, ['invoices:read']);
    const db = server.app.db.prisma;
    await expect(db.$executeRawUnsafe(`UPDATE "AuditEntry" SET "action" = 'x' WHERE "companyId" = '${m.companyId}'`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM "AuditEntry" WHERE "companyId" = '${m.companyId}'`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe('TRUNCATE "AuditEntry"')).rejects.toThrow(/append-only/);
    expect(await db.auditEntry.count({ where: { companyId: m.companyId } })).toBe(1);
    // A refused change (a private webhook URL) writes no entry.
    const bad = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: 'http://127.0.0.1/h' } });
    expect(bad.status).toBe(422);
    expect(await db.auditEntry.count({ where: { companyId: m.companyId } })).toBe(1);
  });
});

function forbiddenFor(res: { status: number; body: any }) {
  expect(res.status).toBe(403);
  expect(res.body.error.message).toContain('settings:read');
}
