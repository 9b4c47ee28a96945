// Payout protection through the real server: with allowListOnly a withdrawal to a book address younger than the
// cool-down is refused per item, an older one passes (the cool-down runs on the test clock), an address outside the
// book is refused, a rule to one is a 422; turning the policy off or shortening the cool-down waits for the
// cool-down, strengthening holds at once; scopes, validation, live mode's minimum, GraphQL and the audit log.
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { fund } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { makeKey } from './support.ts';

const BOOKED = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const OUTSIDE = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const HOUR_MS = 3_600_000;

const withdrawTo = async (server: TestServer, token: string, ...addresses: string[]) => {
  const res = await server.request('POST', '/api/transactions/withdraw', { token, json: { items: addresses.map((to) => ({ amount: '5', to, asset: 'trc20usdt' })) } });
  expect(res.status, res.text).toBe(200);
  return res.body as { success: boolean; message: string; uid: string }[];
};
const advance = async (server: TestServer, token: string, minutes: number) => {
  const res = await server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes } });
  expect(res.status, res.text).toBe(200);
};
const setPolicy = async (server: TestServer, token: string, allowListOnly: boolean, cooldownHours: number) => {
  const res = await server.request('PUT', '/api/company/settings/payout-policy', { token, json: { allowListOnly, cooldownHours } });
  expect(res.status, res.text).toBe(200);
  return res.body as { allowListOnly: boolean; cooldownHours: number; pending: { allowListOnly: boolean; cooldownHours: number; effectiveAt: string } | null };
};
const rule = (to: string) => ({ assets: { trc20usdt: { amount: 500, isEnabled: true, withdrawalAddress: to, withdrawalTag: null } } });

describe.each(DATABASES)('payout protection on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('allowListOnly: a book address younger than the cool-down is refused, an older one passes, one outside the book never; rules likewise (422)', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    await fund(server, token, 'trc20usdt', '200');
    expect(await setPolicy(server, token, true, 24)).toEqual({ allowListOnly: true, cooldownHours: 24, pending: null });
    const added = await server.request('POST', '/api/company/payout-addresses', { token, json: { asset: 'trc20usdt', address: BOOKED, label: 'Cold wallet' } });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toMatchObject({ asset: 'trc20usdt', address: BOOKED, tag: null, label: 'Cold wallet' });
    expect(new Date(added.body.usableFrom).getTime() - new Date(added.body.createdAt).getTime()).toBe(24 * HOUR_MS);

    const young = await withdrawTo(server, token, BOOKED, OUTSIDE);
    expect(young[0]).toEqual({ success: false, uid: '', message: expect.stringContaining('less than 24 h ago') });
    expect(young[1]).toEqual({ success: false, uid: '', message: expect.stringContaining('not in the payout address book') });
    const youngRule = await server.request('PATCH', '/api/company/auto-withdrawals', { token, json: rule(BOOKED) });
    expect(youngRule.status).toBe(422);
    expect(youngRule.body.error.details).toEqual([{ path: 'assets.trc20usdt.withdrawalAddress', message: expect.stringContaining('less than 24 h ago') }]);

    // The cool-down runs on the tenant's clock: the test clock in test mode.
    await advance(server, token, 24 * 60 + 1);
    const old = await withdrawTo(server, token, BOOKED, OUTSIDE);
    expect(old[0]).toMatchObject({ success: true, uid: expect.any(String) });
    expect(old[1]).toEqual({ success: false, uid: '', message: expect.stringContaining('not in the payout address book') });
    expect((await server.request('PATCH', '/api/company/auto-withdrawals', { token, json: rule(BOOKED) })).status).toBe(200);
    const outsideRule = await server.request('PATCH', '/api/company/auto-withdrawals', { token, json: rule(OUTSIDE) });
    expect(outsideRule.status).toBe(422);
    expect(outsideRule.body.error.details[0]).toMatchObject({ path: 'assets.trc20usdt.withdrawalAddress', message: expect.stringContaining('not in the payout address book') });
    // A disabled rule may keep any address (it sends nothing).
    expect((await server.request('PATCH', '/api/company/auto-withdrawals', { token, json: { assets: { trc20usdt: { ...rule(OUTSIDE).assets.trc20usdt, isEnabled: false } } } })).status).toBe(200);

    // GraphQL withdraw meets the same guard.
    const gql = await server.graphql(`mutation { withdraw(input: { items: [{ amount: "5", to: "${OUTSIDE}", asset: TRC20USDT }] }) { __typename ... on WithdrawSuccess { results { success message } } } }`, {}, token);
    expect(gql.body.data?.withdraw?.results?.[0] ?? gql.body, gql.text).toMatchObject({ success: false, message: expect.stringContaining('not in the payout address book') });

    // A rule set while the policy was off does not send outside the book once it is on.
    const other = await server.merchant();
    expect((await server.request('PATCH', '/api/company/auto-withdrawals', { token: other.publicToken, json: rule(OUTSIDE) })).status).toBe(200);
    await setPolicy(server, other.publicToken, true, 24);
    await fund(server, other.publicToken, 'trc20usdt', '600');
    expect((await server.request('GET', '/api/transactions/withdrawals', { token: other.publicToken })).body.withdrawals).toEqual([]);
    await setPolicy(server, other.publicToken, false, 24);
    await advance(server, other.publicToken, 24 * 60 + 1);
    await fund(server, other.publicToken, 'trc20usdt', '1');
    expect((await server.request('GET', '/api/transactions/withdrawals', { token: other.publicToken })).body.withdrawals).toHaveLength(1);

    // Removing the entry is at once.
    const removed = await server.request('DELETE', `/api/company/payout-addresses/${added.body.id}`, { token });
    expect(removed.status).toBe(204);
    expect((await withdrawTo(server, token, BOOKED))[0]!.message).toContain('not in the payout address book');
  });

  it('weakening waits for the cool-down in force, strengthening holds at once', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    await fund(server, token, 'trc20usdt', '100');
    await setPolicy(server, token, true, 24);
    const before = Date.now();
    const off = await setPolicy(server, token, false, 24);
    expect(off).toMatchObject({ allowListOnly: true, cooldownHours: 24, pending: { allowListOnly: false, cooldownHours: 24 } });
    const waitsUntil = new Date(off.pending!.effectiveAt).getTime();
    expect(waitsUntil).toBeGreaterThanOrEqual(before + 24 * HOUR_MS - 1_000);
    // Not effective before the cool-down: still refused an hour before it ends.
    await advance(server, token, 23 * 60);
    expect((await withdrawTo(server, token, OUTSIDE))[0]!.message).toContain('not in the payout address book');
    expect((await server.request('GET', '/api/company/settings/payout-policy', { token })).body.allowListOnly).toBe(true);
    await advance(server, token, 61);
    expect((await server.request('GET', '/api/company/settings/payout-policy', { token })).body).toEqual({ allowListOnly: false, cooldownHours: 24, pending: null });
    expect((await withdrawTo(server, token, OUTSIDE))[0]!.success).toBe(true);

    // Turning it on and lengthening the cool-down hold at once; shortening waits; test mode may go to 0.
    expect(await setPolicy(server, token, true, 48)).toEqual({ allowListOnly: true, cooldownHours: 48, pending: null });
    const shorter = await setPolicy(server, token, true, 0);
    expect(shorter).toMatchObject({ allowListOnly: true, cooldownHours: 48, pending: { allowListOnly: true, cooldownHours: 0 } });
    await advance(server, token, 48 * 60);
    expect((await server.request('GET', '/api/company/settings/payout-policy', { token })).body).toEqual({ allowListOnly: true, cooldownHours: 0, pending: null });
    // With a cool-down of 0 a weakening holds at once, and a new entry is usable at once.
    await server.request('POST', '/api/company/payout-addresses', { token, json: { asset: 'trc20usdt', address: BOOKED, label: 'Now' } });
    expect((await withdrawTo(server, token, BOOKED))[0]!.success).toBe(true);
    expect(await setPolicy(server, token, false, 0)).toEqual({ allowListOnly: false, cooldownHours: 0, pending: null });

    // The audit log has each change with the policy before and after.
    const audit = await server.request('GET', '/api/company/audit-log?limit=100', { token });
    const changes = (audit.body.entries as { action: string; details: any }[]).filter((e) => e.action === 'payout_policy.changed');
    expect(changes).toHaveLength(5);
    expect(changes.at(-2)!.details).toMatchObject({ requested: { allowListOnly: false, cooldownHours: 24 }, after: { allowListOnly: true, pending: { allowListOnly: false } } });
    expect((audit.body.entries as { action: string }[]).filter((e) => e.action === 'payout_address.added')).toHaveLength(1);
  });

  it('validation like withdrawals, live mode needs a cool-down, scopes, and GraphQL', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    for (const [json, path] of [
      [{ asset: 'trc20usdt', address: 'nope', label: 'x' }, 'address'],
      [{ asset: 'ton', address: 'EQD4FPq-PRDieyQKkizFTRtSDyucUIqrj0v_zXJmqaDp6_0t', label: 'x' }, 'tag'],
      [{ asset: 'trc20usdt', address: BOOKED, tag: '1', label: 'x' }, 'tag'],
      [{ asset: 'trc20usdt', address: BOOKED, label: '' }, 'label'],
      [{ asset: 'doge', address: BOOKED, label: 'x' }, 'asset'],
    ] as const) {
      const res = await server.request('POST', '/api/company/payout-addresses', { token, json });
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await server.request('POST', '/api/company/payout-addresses', { token, json: { asset: 'trc20usdt', address: BOOKED, label: 'a' } })).status).toBe(201);
    expect((await server.request('POST', '/api/company/payout-addresses', { token, json: { asset: 'trc20usdt', address: BOOKED, label: 'b' } })).status).toBe(409);
    for (const json of [{ allowListOnly: true, cooldownHours: -1 }, { allowListOnly: true, cooldownHours: 1.5 }, { allowListOnly: 'yes', cooldownHours: 1 }, { allowListOnly: true, cooldownHours: 8761 }]) {
      expect((await server.request('PUT', '/api/company/settings/payout-policy', { token, json })).status, JSON.stringify(json)).toBe(422);
    }
    const live = await server.liveMerchant();
    const zero = await server.request('PUT', '/api/company/settings/payout-policy', { token: live.publicToken, json: { allowListOnly: true, cooldownHours: 0 } });
    expect(zero.status).toBe(422);
    expect(zero.body.error.details[0].path).toBe('cooldownHours');

    const reader = await makeKey(server, token, ['payouts:read']);
    expect((await server.request('GET', '/api/company/payout-addresses', { token: reader.token })).body.addresses).toHaveLength(1);
    expect((await server.request('GET', '/api/company/settings/payout-policy', { token: reader.token })).status).toBe(200);
    const denied = await server.request('PUT', '/api/company/settings/payout-policy', { token: reader.token, json: { allowListOnly: false, cooldownHours: 24 } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('payouts:write');
    expect((await server.request('POST', '/api/company/payout-addresses', { token: reader.token, json: { asset: 'trc20usdt', address: OUTSIDE, label: 'x' } })).status).toBe(403);

    const added = await server.graphql(
      `mutation { addPayoutAddress(input: { asset: TRC20USDT, address: "${OUTSIDE}", label: "gql" }) { __typename ... on AddPayoutAddressSuccess { payoutAddress { id asset label usableFrom } } } }`,
      {},
      token,
    );
    expect(added.body.data.addPayoutAddress.payoutAddress).toMatchObject({ asset: 'TRC20USDT', label: 'gql' });
    const listed = await server.graphql('{ payoutAddresses(first: 10) { totalCount nodes { address } } payoutPolicy { allowListOnly cooldownHours pending { effectiveAt } } }', {}, reader.token);
    expect(listed.body.data).toEqual({ payoutAddresses: { totalCount: 2, nodes: [{ address: OUTSIDE }, { address: BOOKED }] }, payoutPolicy: { allowListOnly: false, cooldownHours: 24, pending: null } });
    // On at once; the shorter cool-down (12 < 24) is a weakening and waits.
    const set = await server.graphql('mutation { setPayoutPolicy(input: { allowListOnly: true, cooldownHours: 12 }) { __typename ... on SetPayoutPolicySuccess { payoutPolicy { allowListOnly cooldownHours pending { cooldownHours } } } } }', {}, token);
    expect(set.body.data.setPayoutPolicy.payoutPolicy).toEqual({ allowListOnly: true, cooldownHours: 24, pending: { cooldownHours: 12 } });
    const removed = await server.graphql(`mutation { removePayoutAddress(input: { id: "${added.body.data.addPayoutAddress.payoutAddress.id}" }) { __typename } }`, {}, token);
    expect(removed.body.data.removePayoutAddress.__typename).toBe('RemovePayoutAddressSuccess');
    const readerWrite = await server.graphql('mutation { setPayoutPolicy(input: { allowListOnly: false, cooldownHours: 12 }) { __typename } }', {}, reader.token);
    expect(readerWrite.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' }, message: expect.stringContaining('payouts:write') });
  });
});
