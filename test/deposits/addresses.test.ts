import { describe, expect, it } from 'vitest';
import { validateAddress } from '../../src/chains/address-formats.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const create = (server: TestServer, token: string, json: unknown) => server.request('POST', '/api/static-addresses', { token, json });

describe.each(DATABASES)('static addresses on %s', (kind) => {
  const server = useServer(kind);

  it('issues one permanent address per user and asset, in the network format, and answers it again', async () => {
    const m = await server.merchant();
    const first = await create(server, m.publicToken, { asset: 'trc20usdt', internalUserId: 'user-1', email: 'u1@example.com' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      asset: 'trc20usdt',
      network: 'tron',
      address: expect.any(String),
      tag: null,
      internalUserId: 'user-1',
      email: 'u1@example.com',
      createdAt: expect.stringMatching(/Z$/),
    });
    expect(validateAddress('tron', first.body.address)).toBe(true);
    const again = await create(server, m.publicToken, { asset: 'trc20usdt', internalUserId: 'user-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // Another asset or user: another address.
    const btc = await create(server, m.publicToken, { asset: 'btc', internalUserId: 'user-1' });
    expect(btc.status).toBe(201);
    expect(validateAddress('btc', btc.body.address)).toBe(true);
    expect(btc.body.email).toBeNull();
    const ton = await create(server, m.publicToken, { asset: 'ton', internalUserId: 'user-2' });
    expect(ton.body).toMatchObject({ network: 'ton', tag: expect.stringMatching(/^\d+$/) });
    expect((await server.request('GET', `/api/static-addresses/${first.body.id}`, { token: m.publicToken })).body).toEqual(first.body);
  });

  it('20 concurrent creates for one user and asset give one address', async () => {
    const m = await server.merchant();
    const results = await Promise.all(Array.from({ length: 20 }, () => create(server, m.publicToken, { asset: 'eth', internalUserId: 'racer' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.every((r) => r.status === 201 || r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await server.app.db.prisma.paymentAddress.count({ where: { companyId: m.companyId } })).toBe(1);
  });

  it('lists with filters and cursor pages, and keeps merchants apart', async () => {
    const a = await server.merchant();
    const b = await server.merchant();
    const ids: string[] = [];
    for (const [asset, user] of [['btc', 'u1'], ['eth', 'u1'], ['ltc', 'u2']] as const) {
      ids.push((await create(server, a.publicToken, { asset, internalUserId: user })).body.id);
    }
    const all = await server.request('GET', '/api/static-addresses?limit=2', { token: a.publicToken });
    expect(all.body.staticAddresses.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const next = await server.request('GET', `/api/static-addresses?limit=2&after=${all.body.nextCursor}`, { token: a.publicToken });
    expect(next.body).toEqual({ staticAddresses: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    const u1 = await server.request('GET', '/api/static-addresses?internalUserId=u1&asset=eth', { token: a.publicToken });
    expect(u1.body.staticAddresses.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    expect((await server.request('GET', '/api/static-addresses', { token: b.publicToken })).body.staticAddresses).toEqual([]);
    expect((await server.request('GET', `/api/static-addresses/${ids[0]}`, { token: b.publicToken })).status).toBe(404);
    expect((await server.request('GET', '/api/static-addresses/not-an-id', { token: a.publicToken })).status).toBe(404);
    expect((await server.request('GET', '/api/static-addresses')).status).toBe(401);
  });

  it('refuses bad input with the standard error', async () => {
    const m = await server.merchant({ acceptedAssets: ['btc', 'usdt'] });
    const cases: [unknown, string][] = [
      [{ asset: 'doge', internalUserId: 'u' }, 'asset'],
      [{ asset: 'usdt', internalUserId: 'u' }, 'asset'],
      [{ asset: 'eth', internalUserId: 'u' }, 'asset'], // not accepted by this merchant
      [{ asset: 'btc' }, 'internalUserId'],
      [{ asset: 'btc', internalUserId: '   ' }, 'internalUserId'],
      [{ asset: 'btc', internalUserId: 'x'.repeat(129) }, 'internalUserId'],
      [{ asset: 'btc', internalUserId: 'u', email: 'not-an-email' }, 'email'],
      [{ asset: 'btc', internalUserId: 7 }, 'internalUserId'],
    ];
    for (const [json, path] of cases) {
      const res = await create(server, m.publicToken, json);
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await server.request('GET', '/api/static-addresses?limit=0', { token: m.publicToken })).status).toBe(422);
    expect((await server.request('GET', '/api/deposits?status=lost', { token: m.publicToken })).status).toBe(422);
    expect(await server.app.db.prisma.staticAddress.count({ where: { companyId: m.companyId } })).toBe(0);
  });
});
