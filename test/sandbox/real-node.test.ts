// Sandbox controls never reach live money (docs/modes.md): with ethereum on a real node (anvil), every sandbox
// transfer, confirmation, drop and withdrawal outcome is refused to the live token (403 FORBIDDEN) and, aimed at a
// live object with the same merchant's test token, finds nothing (404), over REST and GraphQL alike; nothing is
// recorded or credited: a merchant cannot invent money that never arrived, settle a payment the node has not
// confirmed, or release the money of a withdrawal that is on its way. Test mode meanwhile runs ethereum on the sandbox.
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { encodeNodeId } from '../../src/graphql/node-ids.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

const CONFIRMATIONS = 3;
/** Scans run every 100 ms; a loaded machine may still take seconds for one. */
const CHAIN_WAIT_MS = 30_000;
const FORBIDDEN = { code: 'FORBIDDEN', message: 'The sandbox takes a test-mode token (pk_test_…): a live-mode token never reaches simulated chains or the test clock' };
const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;

const ERROR_FIELDS = '... on Error { code message }';
const gql = {
  create: `mutation($i: CreateSandboxTransferInput!) { createSandboxTransfer(input: $i) { __typename ${ERROR_FIELDS} } }`,
  confirm: `mutation($i: ConfirmSandboxTransferInput!) { confirmSandboxTransfer(input: $i) { __typename ${ERROR_FIELDS} } }`,
  drop: `mutation($i: DropSandboxTransferInput!) { dropSandboxTransfer(input: $i) { __typename ${ERROR_FIELDS} } }`,
  confirmWithdrawal: `mutation($i: SandboxWithdrawalInput!) { confirmSandboxWithdrawal(input: $i) { __typename ${ERROR_FIELDS} } }`,
  rejectWithdrawal: `mutation($i: SandboxWithdrawalInput!) { rejectSandboxWithdrawal(input: $i) { __typename ${ERROR_FIELDS} } }`,
};

function merchantCalls(server: TestServer, token: string, testToken: string) {
  const call = (method: string, path: string, json?: unknown) => server.request(method, path, { token, json });
  return {
    call,
    /**
     * A sandbox call on a live object: refused to the live token (403 FORBIDDEN in the one error shape); the same
     * merchant's test token does not see the object (404).
     */
    async refusedRest(method: string, path: string, json?: unknown) {
      const res = await call(method, path, json);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
      expect(res.body.error).toMatchObject(FORBIDDEN);
      const asTest = await server.request(method, path, { token: testToken, json });
      expect(asTest.status, `${method} ${path} with the test token: ${asTest.text}`).toBe(404);
    },
    /** The same over GraphQL: the mutation's ForbiddenError, and NotFoundError for the test token. */
    async refusedGraphql(document: string, input: Record<string, unknown>, field: string) {
      const res = await server.graphql(document, { i: input }, token);
      expect(res.body.errors, res.text).toBeUndefined();
      expect(res.body.data[field]).toEqual({ __typename: 'ForbiddenError', ...FORBIDDEN });
      const asTest = await server.graphql(document, { i: input }, testToken);
      expect(asTest.body.data[field], asTest.text).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    },
    async invoice(paymentCurrency: string, price: string, invoiceCurrency = paymentCurrency === 'eth' ? 'eth' : 'usd') {
      const created = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency, items: [{ name: 'Order', price }] });
      expect(created.status, created.text).toBe(201);
      const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });
      expect(filled.status, filled.text).toBe(200);
      return { id: created.body.id as string, address: filled.body.address.address as Address, amount: filled.body.paymentDetails.amount as string };
    },
    read: async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body,
    balances: async () => (await call('GET', '/api/company/balances')).body.balances,
  };
}

describe.each(DATABASES)('sandbox controls on a network that runs on a real node (%s)', (kind) => {
  let node: Anvil | undefined;
  const env: Record<string, string> = { WITHDRAWAL_SEND_INTERVAL_MS: '200' };
  beforeAll(async () => {
    node = await startAnvil();
    Object.assign(
      env,
      chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100 } }),
    );
  });
  afterAll(async () => node?.stop());
  const server = useServer(kind, env);
  const prisma = () => server.app.db.prisma;

  it('a sandbox transfer to a live invoice or address is refused and records nothing; test mode takes one on ethereum too', async () => {
    expect(server.app.platform.chains.health().find((c) => c.network === 'ethereum')).toMatchObject({ live: 'node', test: 'sandbox' });
    const m = await server.liveMerchant();
    const h = merchantCalls(server, m.publicToken, m.test.publicToken);
    const invoice = await h.invoice('eth', '1');
    const deposit = await h.call('POST', '/api/static-addresses', { asset: 'eth', internalUserId: 'player-1' });
    expect(deposit.status, deposit.text).toBe(201);

    // Final at once if it were taken (12 >= the node's 3): money that never arrived.
    await h.refusedRest('POST', '/api/sandbox/transfers', { invoiceId: invoice.id, amount: invoice.amount, confirmations: 12 });
    await h.refusedRest('POST', '/api/sandbox/transfers', { address: invoice.address, amount: invoice.amount, confirmations: 12 });
    await h.refusedRest('POST', '/api/sandbox/transfers', { address: deposit.body.address, amount: '5', confirmations: 12 });
    // Another asset to the same address lands on the same network: refused too.
    await h.refusedRest('POST', '/api/sandbox/transfers', { invoiceId: invoice.id, amount: '30', asset: 'usdterc20', confirmations: 12 });
    await h.refusedGraphql(gql.create, { invoiceId: invoice.id, amount: invoice.amount, confirmations: 12 }, 'createSandboxTransfer');
    await h.refusedGraphql(gql.create, { address: deposit.body.address, amount: '5', confirmations: 12 }, 'createSandboxTransfer');

    expect((await h.read(invoice.id)).status).toBe('pending');
    expect(await prisma().chainTransfer.count()).toBe(0);
    expect(await prisma().ledgerEntry.count()).toBe(0);
    expect(await h.balances()).toEqual([]);

    // The same merchant in test mode: ethereum runs on the sandbox chain there; taken, final, credited to test mode only.
    const t = merchantCalls(server, m.test.publicToken, m.test.publicToken);
    const testEth = await t.invoice('eth', '1');
    expect(testEth.address).not.toBe(invoice.address);
    const paid = await t.call('POST', '/api/sandbox/transfers', { invoiceId: testEth.id, amount: testEth.amount, confirmations: 12 });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({ invoiceId: testEth.id, state: 'confirmed' });
    const viaGraphql = await server.graphql(gql.create, { i: { invoiceId: (await t.invoice('trc20usdt', '100')).id, amount: '101', confirmations: 19 } }, m.test.publicToken);
    expect(viaGraphql.body.data.createSandboxTransfer.__typename).toBe('CreateSandboxTransferSuccess');
    expect((await t.read(testEth.id)).status).toBe('done');
    expect(await t.balances()).toEqual([
      { asset: 'eth', available: '1', held: '0', pending: '0', suspense: '0' },
      { asset: 'trc20usdt', available: '100', held: '0', pending: '0', suspense: '0' },
    ]);
    expect(await h.balances()).toEqual([]);
    expect((await h.read(invoice.id)).status).toBe('pending');
    expect(await prisma().chainTransfer.count({ where: { mode: 'live' } })).toBe(0);
  });

  it("the sandbox cannot confirm or drop a payment the node reported: it stays as deep as the node says, uncredited", async () => {
    const m = await server.liveMerchant();
    const h = merchantCalls(server, m.publicToken, m.test.publicToken);
    const invoice = await h.invoice('eth', '1');
    await node!.pay(invoice.address, invoice.amount);
    await node!.mine(1);
    const seen = await eventually(() => h.read(invoice.id), (b) => b.status === 'processing', CHAIN_WAIT_MS);
    expect(seen.invoiceTransactions).toEqual([expect.objectContaining({ amount: invoice.amount, confirmations: 1, status: 'seen', kind: 'payment' })]);
    const transferId = seen.invoiceTransactions[0].id as string;

    await h.refusedRest('POST', `/api/sandbox/transfers/${transferId}/confirm`, { confirmations: CONFIRMATIONS });
    await h.refusedRest('POST', `/api/sandbox/transfers/${transferId}/confirm`, {});
    await h.refusedRest('POST', `/api/sandbox/transfers/${transferId}/drop`);
    const globalId = encodeNodeId('SandboxTransfer', transferId);
    await h.refusedGraphql(gql.confirm, { id: globalId, confirmations: CONFIRMATIONS }, 'confirmSandboxTransfer');
    await h.refusedGraphql(gql.drop, { id: globalId }, 'dropSandboxTransfer');

    // No block was mined meanwhile: the node still says one confirmation.
    const after = await h.read(invoice.id);
    expect(after.status).toBe('processing');
    expect(after.invoiceTransactions).toEqual([expect.objectContaining({ id: transferId, confirmations: 1, status: 'seen' })]);
    expect(await h.balances()).toEqual([{ asset: 'eth', available: '0', held: '0', pending: invoice.amount, suspense: '0' }]);
    expect(await prisma().ledgerEntry.count({ where: { invoiceId: invoice.id } })).toBe(0);
  });

  it('the sandbox cannot confirm or fail a withdrawal sent on the node: it stays processing, its money held', async () => {
    const m = await server.liveMerchant();
    const h = merchantCalls(server, m.publicToken, m.test.publicToken);
    // 1 eth for the merchant (1.01 paid, 0.01 fee), final on the node; ether in the hot wallet to pay out of.
    const invoice = await h.invoice('eth', '1');
    await node!.pay(invoice.address, invoice.amount);
    await node!.pay(hot, '2', 1);
    await node!.mine(CONFIRMATIONS);
    await eventually(() => h.read(invoice.id), (b) => b.status === 'done', CHAIN_WAIT_MS);
    expect(await h.balances()).toEqual([{ asset: 'eth', available: '1', held: '0', pending: '0', suspense: '0' }]);

    const to = node!.payers[3]!.address;
    const res = await h.call('POST', '/api/transactions/withdraw', { items: [{ amount: '0.5', tag: '', to, asset: 'eth' }] });
    expect(res.body[0], res.text).toMatchObject({ success: true });
    const uid = res.body[0].uid as string;
    // Broadcast to the node (in its mempool: nothing is mined from here on).
    const sent = await eventually(() => h.call('GET', `/api/transactions/withdrawals/${uid}`).then((r) => r.body), (w) => Boolean(w.txHash), CHAIN_WAIT_MS);
    expect(sent.status).toBe('processing');

    await h.refusedRest('POST', `/api/sandbox/withdrawals/${uid}/confirm`);
    await h.refusedRest('POST', `/api/sandbox/withdrawals/${uid}/reject`);
    await h.refusedGraphql(gql.confirmWithdrawal, { uid }, 'confirmSandboxWithdrawal');
    await h.refusedGraphql(gql.rejectWithdrawal, { uid }, 'rejectSandboxWithdrawal');

    const after = (await h.call('GET', `/api/transactions/withdrawals/${uid}`)).body;
    expect(after).toMatchObject({ uid, status: 'processing', txHash: sent.txHash });
    // 0.5 plus the 0.0005 network fee stay held; nothing went back to available, nothing was booked as sent.
    expect(await h.balances()).toEqual([{ asset: 'eth', available: '0.4995', held: '0.5005', pending: '0', suspense: '0' }]);
    const kinds = await prisma().ledgerEntry.groupBy({ by: ['kind'], where: { companyId: m.tenantId }, _count: true });
    expect(kinds.map((k) => k.kind).sort()).toEqual(['fee', 'payment', 'withdrawal_hold']);
  });

  it('a live token is refused before anything else of the request is read: a malformed id, query or body still answers 403, never 400 or 422', async () => {
    const m = await server.liveMerchant();
    const token = m.live.publicToken;
    const cases: [string, string, string | undefined][] = [
      ['POST', '/api/sandbox/transfers', '{"invoiceId": 1, "amount": "1e400", "confirmations": -1}'],
      ['POST', '/api/sandbox/transfers', '{"amount": "1"'],
      ['POST', '/api/sandbox/transfers?unknown=%00', '{}'],
      ['POST', '/api/sandbox/transfers/a%00b/confirm', '{"confirmations": "many"}'],
      ['POST', '/api/sandbox/transfers/not-a-uuid/drop', undefined],
      ['POST', '/api/sandbox/clock/advance', '{"minutes": 1e10000000}'],
      ['GET', '/api/sandbox/clock?x=%ED%A0%80', undefined],
      ['POST', '/api/sandbox/withdrawals/%00/confirm', '[]'],
      ['POST', '/api/sandbox/withdrawals/x/reject', 'null'],
    ];
    for (const [method, path, body] of cases) {
      const res = await server.request(method, path, { token, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
      expect(res.status, `${method} ${path} ${body}: ${res.text}`).toBe(403);
      expect(res.body.error).toMatchObject(FORBIDDEN);
      expect(res.headers.get('payrail-mode')).toBe('live');
    }
    // Over GraphQL likewise: input the resolver would refuse as invalid gets the ForbiddenError first.
    const advance = await server.graphql('mutation { advanceSandboxClock(input: { minutes: -5 }) { __typename ... on Error { code message } } }', {}, token);
    expect(advance.body.data.advanceSandboxClock).toEqual({ __typename: 'ForbiddenError', ...FORBIDDEN });
    const confirm = await server.graphql(gql.confirm, { i: { id: 'not-a-node-id', confirmations: -1 } }, token);
    expect(confirm.body.data.confirmSandboxTransfer).toEqual({ __typename: 'ForbiddenError', ...FORBIDDEN });
    // The test token with the same malformed input is told what is wrong with it.
    expect((await server.request('POST', '/api/sandbox/clock/advance', { token: m.test.publicToken, json: { minutes: -5 } })).status).toBe(422);
  });
});
