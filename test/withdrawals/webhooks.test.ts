// The four withdrawal webhooks of the spec's table, received by a real HTTP endpoint: exact bodies, both signatures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { eventually, fund } from '../support/funding.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const EVM = '0x52908400098527886E0F7030069857D2E4169EE7';

describe.each(DATABASES)('withdrawal webhooks on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  let receiver: Receiver;
  let secret = '';
  beforeAll(async () => {
    receiver = await startReceiver(() => secret);
  });
  afterAll(async () => receiver?.close());

  it('processing (empty txHash), processing (txHash), done; and rejected without a txHash key', async () => {
    const m = await server.merchant();
    secret = m.secretKey;
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } })).status).toBe(200);
    await fund(server, m.publicToken, 'trc20usdt', '100');
    const res = await server.request('POST', '/api/transactions/withdraw', {
      token: m.publicToken,
      json: { items: [{ amount: 12.25, tag: '', to: TRON, asset: 'trc20usdt' }, { amount: '7', tag: '', to: TRON, asset: 'trc20usdt' }] },
    });
    const [done, rejected] = res.body.map((r: { uid: string }) => r.uid) as [string, string];
    const txHashOf = async (uid: string) =>
      (await eventually(() => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }), (r) => r.body.txHash !== null)).body.txHash as string;
    const doneHash = await txHashOf(done);
    await txHashOf(rejected);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${done}/confirm`, { token: m.publicToken })).status).toBe(200);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${rejected}/reject`, { token: m.publicToken })).status).toBe(200);

    const ofWithdrawals = () => receiver.received.filter((r) => r.json['type'] === 'withdrawal');
    await receiver.waitFor(() => ofWithdrawals().length >= 6);
    const bodies = (uid: string) => ofWithdrawals().filter((r) => r.json['uid'] === uid);
    const head = `{"type":"withdrawal","status":`;
    expect(bodies(done).map((r) => r.body)).toEqual([
      `${head}"processing","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${TRON}","txHash":"","uid":"${done}"}`,
      `${head}"processing","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${TRON}","txHash":"${doneHash}","uid":"${done}"}`,
      `${head}"done","asset":"usdt","dchain":"trc20usdt","amount":12.25,"fee":"1","to":"${TRON}","txHash":"${doneHash}","uid":"${done}"}`,
    ]);
    const last = bodies(rejected).at(-1)!;
    expect(last.body).toBe(`${head}"rejected","asset":"usdt","dchain":"trc20usdt","amount":7,"fee":"1","to":"${TRON}","uid":"${rejected}"}`);
    expect(bodies(rejected).map((r) => r.json['status'])).toEqual(['processing', 'processing', 'rejected']);
    for (const r of ofWithdrawals()) {
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.specSignatureValid).toBe(true);
      expect(r.standardSignatureValid).toBe(true);
    }
  });

  it('keeps an 18-decimal amount exact in the webhook, the events feed and the delivery log (never through a float)', async () => {
    const m = await server.merchant();
    secret = m.secretKey;
    await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } });
    await fund(server, m.publicToken, 'eth', '1');
    const amount = '0.123456789012345678';
    const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount, tag: '', to: EVM, asset: 'eth' }] } });
    const uid = res.body[0].uid as string;
    await receiver.waitFor((r) => r.some((x) => x.json['uid'] === uid));
    const exact = `"amount":${amount},"fee":"0.0005"`;
    expect(receiver.received.find((x) => x.json['uid'] === uid)!.body).toContain(exact);
    const feed = await server.request('GET', '/api/company/events?limit=500', { token: m.publicToken });
    expect(feed.text).toContain(exact);
    const log = await server.request('GET', '/api/company/webhooks/deliveries?limit=100', { token: m.publicToken });
    expect(log.text).toContain(exact);
    const gql = await server.graphql('{ webhookDeliveries(first: 100) { nodes { payload } } }', {}, m.publicToken);
    expect(gql.body.data.webhookDeliveries.nodes.some((n: { payload: string }) => n.payload.includes(exact))).toBe(true);
  });
});
