// Deposits to static addresses end to end: the sandbox chain reports them like a watcher, a real receiver gets the
// spec's webhooks, the ledger credits each confirmed deposit once (less its fee) and verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf } from '../support/funding.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const BLOCKED_SENDER = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

async function setup(server: TestServer, receiver: Receiver, setSecret: (s: string) => void, email?: string) {
  const m = await server.merchant();
  setSecret(m.secretKey);
  await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } });
  const address = (
    await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'trc20usdt', internalUserId: 'player-7', ...(email ? { email } : {}) } })
  ).body;
  const send = (json: Record<string, unknown>) => server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, ...json } });
  const confirm = (id: string) => server.request('POST', `/api/sandbox/transfers/${id}/confirm`, { token: m.publicToken, json: {} });
  const drop = (id: string) => server.request('POST', `/api/sandbox/transfers/${id}/drop`, { token: m.publicToken });
  const bodies = () => receiver.received.filter((r) => r.json['id'] === address.id);
  return { m, address, send, confirm, drop, bodies };
}

describe.each(DATABASES)('deposits on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', RISK_DENY_LIST: BLOCKED_SENDER });
  let receiver: Receiver;
  let secret = '';
  beforeAll(async () => {
    receiver = await startReceiver(() => secret);
  });
  afterAll(async () => receiver?.close());
  const setSecret = (s: string) => (secret = s);

  it('processing when seen, done when confirmed: exact webhooks with both signatures, one credit less the fee', async () => {
    const { m, address, send, confirm, bodies } = await setup(server, receiver, setSecret, 'player7@example.com');
    const seen = await send({ amount: '250.5', from: 'TXYZsender' });
    expect(seen.status).toBe(201);
    expect(seen.body).toMatchObject({ invoiceId: null, addressId: address.id, state: 'seen', amount: '250.5' });
    // A duplicate report changes nothing.
    expect((await send({ amount: '250.5', txHash: seen.body.txHash })).body).toMatchObject({ id: seen.body.id, state: 'seen' });
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).available).toBe('0');
    const done = await confirm(seen.body.id);
    expect(done.body).toMatchObject({ state: 'confirmed', confirmations: 19 });
    expect((await confirm(seen.body.id)).body.state).toBe('confirmed');
    // Fee: 1% of 250.5, rounded up to the chain unit, taken by the platform.
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).available).toBe('247.995');

    await receiver.waitFor(() => bodies().length >= 2);
    const fields = `"amount":"250.5","asset":"usdt","network":"tron","depositAddress":"${address.address}"`;
    const tail = `"id":"${address.id}","internal_user_id":"player-7","hash":"${seen.body.txHash}","email":"player7@example.com","feePayer":"merchant"}`;
    expect(bodies().map((r) => r.body)).toEqual([`{${fields},"status":"processing",${tail}`, `{${fields},"status":"done",${tail}`]);
    for (const r of bodies()) expect([r.specSignatureValid, r.standardSignatureValid]).toEqual([true, true]);

    const list = await server.request('GET', `/api/deposits?addressId=${address.id}&status=done`, { token: m.publicToken });
    expect(list.body.deposits).toEqual([expect.objectContaining({ id: seen.body.id, addressId: address.id, amount: '250.5', status: 'done', hash: seen.body.txHash })]);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('failed when the chain drops it, frozen when the risk hook holds it; no e-mail key without an e-mail; dust refused', async () => {
    const { m, address, send, drop, confirm, bodies } = await setup(server, receiver, setSecret);
    const lost = await send({ amount: '10' });
    expect((await drop(lost.body.id)).body.state).toBe('dropped');
    const held = await send({ amount: '20', from: BLOCKED_SENDER, confirmations: 19 });
    expect(held.body.state).toBe('frozen');
    expect((await confirm(held.body.id)).body.state).toBe('frozen');
    const dust = await send({ amount: '0.09' });
    expect(dust.status).toBe(422);
    expect(dust.body.error.details[0].message).toBe('below the deposit dust minimum of 0.1 trc20usdt');
    await receiver.waitFor(() => bodies().length >= 3);
    expect(bodies().map((r) => [r.json['status'], r.json['hash']])).toEqual([
      ['processing', lost.body.txHash],
      ['failed', lost.body.txHash],
      ['frozen', held.body.txHash],
    ]);
    for (const r of bodies()) {
      expect(r.json).not.toHaveProperty('email');
      expect(Object.keys(r.json)).toEqual(['amount', 'asset', 'network', 'depositAddress', 'status', 'id', 'internal_user_id', 'hash', 'feePayer']);
    }
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).available).toBe('0');
    const frozen = await server.request('GET', '/api/deposits?status=frozen', { token: m.publicToken });
    expect(frozen.body.deposits.map((d: { id: string }) => d.id)).toEqual([held.body.id]);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('credits count toward auto-withdrawals like payments do', async () => {
    const { m, send } = await setup(server, receiver, setSecret);
    await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: m.publicToken,
      json: { assets: { trc20usdt: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } } },
    });
    await send({ amount: '100', confirmations: 19 });
    const auto = await server.app.db.prisma.withdrawal.findMany({ where: { companyId: m.companyId } });
    // 100 - 1 fee = 99 available: 98 out plus the 1 network fee.
    expect(auto.map((w) => [w.origin, w.amount.toString()])).toEqual([['auto', '98']]);
  });

  it('GraphQL: createStaticAddress, staticAddress, staticAddresses and deposits on the same services', async () => {
    const m = await server.merchant();
    const created = await server.graphql(
      'mutation($i: CreateStaticAddressInput!){ createStaticAddress(input:$i){ __typename ... on CreateStaticAddressSuccess { staticAddress { id addressId asset network address tag internalUserId email } } ... on ValidationError { code } } }',
      { i: { asset: 'TON', internalUserId: 'g-1', email: 'g@example.com' } },
      m.publicToken,
    );
    const sa = created.body.data.createStaticAddress.staticAddress;
    expect(sa).toMatchObject({ asset: 'TON', network: 'TON', internalUserId: 'g-1', email: 'g@example.com', tag: expect.stringMatching(/^\d+$/) });
    const bad = await server.graphql('mutation($i: CreateStaticAddressInput!){ createStaticAddress(input:$i){ __typename ... on ValidationError { code } } }', { i: { asset: 'TON', internalUserId: '' } }, m.publicToken);
    expect(bad.body.data.createStaticAddress).toEqual({ __typename: 'ValidationError', code: 'VALIDATION_FAILED' });
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: sa.address, tag: sa.tag, amount: '3' } });
    const read = await server.graphql(
      `query($id: ID!){ staticAddress(id:$id){ internalUserId } staticAddresses(filter:{internalUserId:"g-1"}){ totalCount nodes { id } }
        deposits(filter:{staticAddressId:$id, status:[PROCESSING]}){ totalCount nodes { amount status hash staticAddress { id } } } }`,
      { id: sa.addressId },
      m.publicToken,
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data).toEqual({
      staticAddress: { internalUserId: 'g-1' },
      staticAddresses: { totalCount: 1, nodes: [{ id: sa.id }] },
      deposits: { totalCount: 1, nodes: [{ amount: '3', status: 'PROCESSING', hash: expect.any(String), staticAddress: { id: sa.id } }] },
    });
    const other = await server.merchant();
    const theirs = await server.graphql('query($id: ID!){ staticAddress(id:$id){ id } deposits { totalCount } }', { id: sa.addressId }, other.publicToken);
    expect(theirs.body.data).toEqual({ staticAddress: null, deposits: { totalCount: 0 } });
  });
});
