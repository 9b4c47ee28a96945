import { describe, expect, it } from 'vitest';
import { encodeAddress } from '../../src/chains/address-formats.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, eventually, fund } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

// Known-valid addresses of each format (checksums included), and near misses.
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const EVM = '0x52908400098527886E0F7030069857D2E4169EE7';
const BTC = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const LTC = 'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9';
const TON = encodeAddress('ton', new Uint8Array(32).fill(7));
const SOL = encodeAddress('sol', new Uint8Array(32).fill(9));
const DENIED = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

const withdrawOf = (server: TestServer, token: string, items: unknown[], headers: Record<string, string> = {}) =>
  server.request('POST', '/api/transactions/withdraw', { token, json: { items }, headers });

const usdt = (amount: string | number, to = TRON) => ({ amount, tag: '', to, asset: 'trc20usdt' });

async function webhookBodies(server: TestServer, uid: string) {
  const rows = await server.app.db.prisma.$queryRaw<{ type: string; payload: string }[]>`
    SELECT "type", "payload"::text AS payload FROM "Event" WHERE "subjectId" = ${uid} ORDER BY "seq"`;
  return rows.map((r) => ({ type: r.type, body: r.payload }));
}

describe.each(DATABASES)('withdrawals on %s', (kind) => {
  const server = useServer(kind, { RISK_DENY_LIST: DENIED, WITHDRAWAL_SEND_INTERVAL_MS: '200' });

  it('withdraws one item: hold, both processing webhooks, done on confirmation, final debit', async () => {
    const m = await server.merchant();
    expect(await fund(server, m.publicToken, 'trc20usdt', '100')).toBe('100');
    const res = await withdrawOf(server, m.publicToken, [usdt(10.5)]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ message: 'Withdrawal accepted and processing', success: true, uid: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    const uid = res.body[0].uid as string;
    // amount 10.5 + fee 1 held at once.
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '88.5', held: '11.5' });

    const sent = await eventually(
      () => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }),
      (r) => r.body.txHash !== null,
    );
    expect(sent.body).toMatchObject({ uid, status: 'processing', asset: 'trc20usdt', amount: '10.5', fee: '1', total: '11.5', to: TRON, tag: null, origin: 'api' });
    const txHash = sent.body.txHash as string;
    const confirmed = await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.publicToken });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ uid, status: 'done', txHash });
    // Repeating the chain's report changes nothing.
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.publicToken })).body.status).toBe('done');
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/reject`, { token: m.publicToken })).status).toBe(409);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '88.5', held: '0' });

    const common = `"type":"withdrawal","asset":"usdt","dchain":"trc20usdt","amount":10.5,"fee":"1","to":"${TRON}"`;
    expect(await webhookBodies(server, uid)).toEqual([
      { type: 'withdrawal.processing', body: `{"type":"withdrawal","status":"processing","asset":"usdt","dchain":"trc20usdt","amount":10.5,"fee":"1","to":"${TRON}","txHash":"","uid":"${uid}"}` },
      { type: 'withdrawal.processing', body: `{${common.replace('"type":"withdrawal",', '"type":"withdrawal","status":"processing",')},"txHash":"${txHash}","uid":"${uid}"}` },
      { type: 'withdrawal.done', body: `{${common.replace('"type":"withdrawal",', '"type":"withdrawal","status":"done",')},"txHash":"${txHash}","uid":"${uid}"}` },
    ]);
    // The simulated chain holds exactly one transaction for it.
    const broadcasts = await server.app.db.prisma.sandboxBroadcast.findMany({ where: { transferId: uid } });
    expect(broadcasts.map((b) => b.txHash)).toEqual([txHash]);
    const report = await verifyLedger(server.app.db.prisma);
    expect(report.problems).toEqual([]);
  });

  it('rejects on chain failure: webhook without txHash, hold released', async () => {
    const m = await server.merchant();
    await fund(server, m.publicToken, 'trc20usdt', '50');
    const [{ uid }] = (await withdrawOf(server, m.publicToken, [usdt('20')])).body;
    await eventually(() => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }), (r) => r.body.txHash !== null);
    const rejected = await server.request('POST', `/api/sandbox/withdrawals/${uid}/reject`, { token: m.publicToken });
    expect(rejected.body).toMatchObject({ uid, status: 'rejected', rejectReason: 'Failed on the blockchain' });
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '50', held: '0' });
    const events = await webhookBodies(server, uid);
    expect(events.map((e) => e.type)).toEqual(['withdrawal.processing', 'withdrawal.processing', 'withdrawal.rejected']);
    expect(JSON.parse(events[2]!.body)).toEqual({ type: 'withdrawal', status: 'rejected', asset: 'usdt', dchain: 'trc20usdt', amount: 20, fee: '1', to: TRON, uid });
    expect(events[2]!.body).not.toContain('txHash');
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('lets the risk hook reject a withdrawal to a denied address before any broadcast', async () => {
    const m = await server.merchant();
    await fund(server, m.publicToken, 'trc20usdt', '30');
    const [{ uid, success }] = (await withdrawOf(server, m.publicToken, [usdt('10', DENIED)])).body;
    expect(success).toBe(true);
    const w = await eventually(() => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }), (r) => r.body.status !== 'processing');
    expect(w.body).toMatchObject({ status: 'rejected', txHash: null, rejectReason: 'Blocked by the AML/TMS checks (deny list)' });
    expect((await webhookBodies(server, uid)).map((e) => e.type)).toEqual(['withdrawal.processing', 'withdrawal.rejected']);
    expect(await server.app.db.prisma.sandboxBroadcast.count({ where: { transferId: uid } })).toBe(0);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '30', held: '0' });
  });

  it('applies rules 1-6 per item and answers in request order', async () => {
    const m = await server.merchant();
    await fund(server, m.publicToken, 'trc20usdt', '1000');
    await fund(server, m.publicToken, 'bnb', '2');
    await fund(server, m.publicToken, 'ton', '20');
    const res = await withdrawOf(server, m.publicToken, [
      usdt('4.99'), // rule 1: below the minimum of 5
      usdt('5'), // exactly the minimum
      usdt('10', EVM), // rule 4: an Ethereum address for a Tron asset
      usdt('10', `${TRON.slice(0, -1)}u`), // rule 4: a broken checksum
      { amount: '1', tag: '', to: TON, asset: 'ton' }, // rule 6: TON needs a tag
      { amount: '1', tag: '12345', to: TON, asset: 'ton' },
      { amount: '0.01', tag: '', to: EVM, asset: 'bnb' }, // rule 5: an Ethereum-format address for BSC is accepted
      usdt('6', TRON), // rule 2 is checked below through the balance
      { amount: '10', tag: '7', to: TRON, asset: 'trx' }, // a tag on an untagged asset
    ]);
    expect(res.status).toBe(200);
    expect(res.body.map((r: { success: boolean; message: string }) => [r.success, r.message])).toEqual([
      [false, 'Amount is below the minimum withdrawal of 5 trc20usdt'],
      [true, 'Withdrawal accepted and processing'],
      [false, 'Receiver address is not a valid trc20usdt address'],
      [false, 'Receiver address is not a valid trc20usdt address'],
      [false, 'A tag is required for ton'],
      [true, 'Withdrawal accepted and processing'],
      [true, 'Withdrawal accepted and processing'],
      [true, 'Withdrawal accepted and processing'],
      [false, 'trx takes no tag; send an empty string'],
    ]);
    for (const r of res.body) expect(r.uid).toMatch(r.success ? /^[0-9a-f-]{36}$/ : /^$/);
    // Rule 2: each accepted usdt item paid 1 of fee on top: 5 + 1 + 6 + 1 held.
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).held).toBe('13');
    const ton = await server.request('GET', `/api/transactions/withdrawals/${res.body[5].uid}`, { token: m.publicToken });
    expect(ton.body).toMatchObject({ asset: 'ton', amount: '1', fee: '0.01', tag: '12345' });
  });

  it('refuses a batch of one asset as a whole when the balance covers only part of it, never overdrawing', async () => {
    const m = await server.merchant();
    expect(await fund(server, m.publicToken, 'trc20usdt', '30')).toBe('30');
    await fund(server, m.publicToken, 'ton', '20');
    const res = await withdrawOf(server, m.publicToken, [usdt('10'), usdt('10'), { amount: '1', tag: '5', to: TON, asset: 'ton' }, usdt('10')]);
    // 3 x (10 + 1) = 33 > 30: every trc20usdt item is refused; the ton item is not affected.
    const refusal = 'Insufficient balance: the 3 trc20usdt items need 33 (amounts plus fees), 30 available';
    expect(res.body.map((r: { success: boolean; message: string }) => [r.success, r.message])).toEqual([
      [false, refusal],
      [false, refusal],
      [true, 'Withdrawal accepted and processing'],
      [false, refusal],
    ]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '30', held: '0' });
    // Exactly the balance: 19 + 1 + 9 + 1 = 30.
    const exact = await withdrawOf(server, m.publicToken, [usdt('19'), usdt('9')]);
    expect(exact.body.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toMatchObject({ available: '0', held: '30' });
    const single = await withdrawOf(server, m.publicToken, [usdt('5')]);
    expect(single.body[0]).toEqual({ success: false, uid: '', message: 'Insufficient balance: 6 trc20usdt needed (amount plus fee), 0 available' });
  });

  it('answers malformed requests with the standard 4xx error, not per-item results', async () => {
    const m = await server.merchant();
    const cases: [unknown, string][] = [
      [{}, 'items'],
      [{ items: [] }, 'items'],
      [{ items: 'all' }, 'items'],
      [{ items: [usdt('ten')] }, 'items.0.amount'],
      [{ items: [usdt('1e400')] }, 'items.0.amount'],
      [{ items: [usdt('5.0000001')] }, 'items.0.amount'],
      [{ items: [usdt(-5)] }, 'items.0.amount'],
      [{ items: [{ ...usdt(5), asset: 'doge' }] }, 'items.0.asset'],
      [{ items: [{ ...usdt(5), to: 42 }] }, 'items.0.to'],
      [{ items: [{ ...usdt(5), to: 'T'.repeat(129) }] }, 'items.0.to'],
      [{ items: Array.from({ length: 101 }, () => usdt(5)) }, 'items'],
    ];
    for (const [json, path] of cases) {
      const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json });
      expect(res.status, JSON.stringify(json).slice(0, 80)).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await server.request('POST', '/api/transactions/withdraw', { json: { items: [usdt(5)] } })).status).toBe(401);
    expect(await server.app.db.prisma.withdrawal.count({ where: { companyId: m.companyId } })).toBe(0);
  });

  it('replays the first answer for a repeated Idempotency-Key and refuses it with another body', async () => {
    const m = await server.merchant();
    await fund(server, m.publicToken, 'trc20usdt', '100');
    const key = { 'idempotency-key': 'payout-2026-11-23-001' };
    const first = await withdrawOf(server, m.publicToken, [usdt('10'), usdt('1')], key);
    const again = await withdrawOf(server, m.publicToken, [usdt('10'), usdt('1')], key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await server.app.db.prisma.withdrawal.count({ where: { companyId: m.companyId } })).toBe(1);
    const other = await withdrawOf(server, m.publicToken, [usdt('11')], key);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await balanceOf(server, m.publicToken, 'trc20usdt')).held).toBe('11');
  });

  it('keeps merchants apart: another merchant reads and confirms nothing of theirs', async () => {
    const a = await server.merchant();
    const b = await server.merchant();
    await fund(server, a.publicToken, 'trc20usdt', '20');
    const [{ uid }] = (await withdrawOf(server, a.publicToken, [usdt('5')])).body;
    expect((await server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: b.publicToken })).status).toBe(404);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: b.publicToken })).status).toBe(404);
    expect((await server.request('GET', '/api/transactions/withdrawals', { token: b.publicToken })).body.withdrawals).toEqual([]);
    expect((await server.request('GET', '/api/transactions/withdrawals/not-a-uid', { token: a.publicToken })).status).toBe(404);
    const list = await server.request('GET', '/api/transactions/withdrawals?status=processing&asset=trc20usdt&limit=5', { token: a.publicToken });
    expect(list.body.withdrawals.map((w: { uid: string }) => w.uid)).toEqual([uid]);
    expect((await server.request('GET', '/api/transactions/withdrawals?status=lost', { token: a.publicToken })).status).toBe(422);
  });

  it('validates and stores auto-withdrawal rules, answering every asset with the spec fields', async () => {
    const m = await server.merchant();
    const get = await server.request('GET', '/api/company/auto-withdrawals', { token: m.publicToken });
    expect(get.status).toBe(200);
    expect(get.body.autoWithdrawals).toHaveLength(11);
    expect(get.body.autoWithdrawals[0]).toEqual({ assetId: 'btc', amount: 0, isEnabled: false, withdrawalTag: null, withdrawalAddress: '' });
    const patch = (assets: unknown) => server.request('PATCH', '/api/company/auto-withdrawals', { token: m.publicToken, json: { assets } });
    const ok = await patch({
      trc20usdt: { amount: 50.25, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON },
      ton: { amount: '5', isEnabled: true, withdrawalTag: '777', withdrawalAddress: TON },
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('{"assetId":"trc20usdt","amount":50.25,"isEnabled":true,"withdrawalTag":null,');
    expect(ok.body.autoWithdrawals.find((r: { assetId: string }) => r.assetId === 'ton')).toEqual({
      assetId: 'ton',
      amount: 5,
      isEnabled: true,
      withdrawalTag: '777',
      withdrawalAddress: TON,
    });
    // Only the named assets change.
    const sol = await patch({ sol: { amount: 1, isEnabled: false, withdrawalTag: null, withdrawalAddress: SOL } });
    expect(sol.body.autoWithdrawals.find((r: { assetId: string }) => r.assetId === 'trc20usdt').amount).toBe(50.25);

    const bad: [unknown, string][] = [
      [{ trc20usdt: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: EVM } }, 'assets.trc20usdt.withdrawalAddress'],
      [{ ton: { amount: 5, isEnabled: true, withdrawalTag: null, withdrawalAddress: TON } }, 'assets.ton.withdrawalTag'],
      [{ usdt: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } }, 'assets.usdt'],
      [{ trc20usdt: { amount: 1, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } }, 'assets.trc20usdt.amount'],
      [{ trc20usdt: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: '' } }, 'assets.trc20usdt.withdrawalAddress'],
      [{ trc20usdt: { amount: 'x', isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } }, 'assets.trc20usdt.amount'],
      [{ btc: { amount: 1, isEnabled: 'yes', withdrawalTag: null, withdrawalAddress: BTC } }, 'assets.btc.isEnabled'],
      [{ ltc: { amount: 1, isEnabled: true, withdrawalTag: '1', withdrawalAddress: LTC } }, 'assets.ltc.withdrawalTag'],
      [{}, 'assets'],
    ];
    for (const [assets, path] of bad) {
      const res = await patch(assets);
      expect(res.status, JSON.stringify(assets)).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    // A refused PATCH changes nothing, not even its valid parts.
    const mixed = await patch({
      btc: { amount: 1, isEnabled: true, withdrawalTag: null, withdrawalAddress: BTC },
      ton: { amount: 5, isEnabled: true, withdrawalTag: null, withdrawalAddress: TON },
    });
    expect(mixed.status).toBe(422);
    const after = await server.request('GET', '/api/company/auto-withdrawals', { token: m.publicToken });
    expect(after.body.autoWithdrawals.find((r: { assetId: string }) => r.assetId === 'btc').isEnabled).toBe(false);
  });

  it('sends one auto-withdrawal per threshold crossing, through the withdrawal path', async () => {
    const m = await server.merchant();
    await server.request('PATCH', '/api/company/auto-withdrawals', {
      token: m.publicToken,
      json: { assets: { trc20usdt: { amount: 40, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } } },
    });
    // 20 available: below 40.
    await fund(server, m.publicToken, 'trc20usdt', '20');
    expect(await server.app.db.prisma.withdrawal.count({ where: { companyId: m.companyId } })).toBe(0);
    // 20 + 30 = 50 >= 40: the balance goes out, 49 + 1 fee.
    await fund(server, m.publicToken, 'trc20usdt', '30');
    let auto = await server.app.db.prisma.withdrawal.findMany({ where: { companyId: m.companyId }, orderBy: { createdAt: 'asc' } });
    expect(auto.map((w) => [w.origin, w.amount.toString(), w.toAddress])).toEqual([['auto', '49', TRON]]);
    expect(await balanceOf(server, m.publicToken, 'trc20usdt')).toEqual({ available: '0', held: '50' });
    // A second crossing: a second withdrawal.
    await fund(server, m.publicToken, 'trc20usdt', '45');
    auto = await server.app.db.prisma.withdrawal.findMany({ where: { companyId: m.companyId }, orderBy: { createdAt: 'asc' } });
    expect(auto.map((w) => w.amount.toString())).toEqual(['49', '44']);
    const events = await webhookBodies(server, auto[1]!.uid);
    expect(events[0]!.type).toBe('withdrawal.processing');
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });
});

describe('sandbox withdrawal controls with SANDBOX=0', () => {
  const server = useServer('pglite', { SANDBOX: '0' });

  it('refuse the only token that works then, a live one (403), and the test token is refused at the door (401)', async () => {
    const m = await server.merchant();
    const uid = '3f0b5f3e-8a43-4a4c-9d7e-2d2b8f0f7d11';
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.live.publicToken })).status).toBe(403);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/reject`, { token: m.live.publicToken })).status).toBe(403);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/reject`, { token: m.test.publicToken })).status).toBe(401);
  });
});
