// A restart in the middle of a Tron scan: the real server (src/bin/server.ts) as a child process is killed with SIGKILL
// after it reported some blocks of a scan and before it saved the scan's cursor, then started again on the same
// database. The new process reads those blocks again from the saved cursor: every payment is credited exactly once,
// none is lost, and the ledger (with the custody check against the chain) verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Money } from '../../src/domain/money.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { FAKE_USDT_CONTRACT, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { eventually } from '../support/funding.ts';
import { killServer, runCli, startServerProcess, stopAllChildren, type Credentials, type ServerProcess } from '../support/processes.ts';
import { environment, startWithMerchant } from '../support/server-env.ts';

const PAYMENTS = 6;

describe.each(DATABASES)('kill -9 in the middle of a Tron scan, restart on %s', { timeout: 300_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  let fake: FakeChains;
  let env: Record<string, string>;
  let server: ServerProcess;
  let merchant: Credentials;

  const start = async () => (server = await startServerProcess(env));
  const api = (method: string, path: string, json?: unknown) => server.request(method, path, { json, token: merchant.live.publicToken });

  beforeAll(async () => {
    fake = await startFakeChains();
    env = {
      ...(await environment(kind, databases)),
      ...chainsEnv({ tron: { apiUrl: fake.tronUrl, xpub: testXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 3, pollMs: 100 } }),
    };
    merchant = await startWithMerchant(kind, env, start, 'Restart Test');
  });
  afterAll(async () => {
    await stopAllChildren();
    await fake?.close();
    for (const db of databases) await db.drop();
  });

  it('loses and duplicates nothing', async () => {
    const invoices: { id: string; address: string; amount: string }[] = [];
    for (let i = 0; i < PAYMENTS; i++) {
      const created = await api('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] });
      const filled = await api('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' });
      expect(filled.status, filled.text).toBe(200);
      invoices.push({ id: created.body.id, address: filled.body.address.address, amount: filled.body.paymentDetails.amount });
    }
    const read = (id: string) => api('GET', `/api/invoices/v1/regular/${id}`).then((r) => r.body);

    // Six blocks at once (one scan sees them all), one payment each; the scan stops at the fifth block: the first
    // four, read in parallel before it, are reported by then (deep enough to be done), and the scan's cursor is not
    // saved.
    const first = fake.tron.head.number + 1;
    const held = fake.hold((route, body) => route === 'tron /wallet/getblockbynum' && body.num === first + 4);
    for (const inv of invoices) fake.tron.addBlock([{ asset: 'usdt', to: inv.address, units: BigInt(new Money(inv.amount).times(1e6).toFixed(0)) }]);
    await held.reached;
    for (const inv of invoices.slice(0, 4)) await eventually(() => read(inv.id), (i) => i.status === 'done');
    expect((await read(invoices[4]!.id)).status).toBe('pending');

    await killServer(server);
    held.release();
    fake.tron.advance(3);
    await start();

    for (const inv of invoices) {
      const done = await eventually(() => read(inv.id), (i) => i.status === 'done', 30_000);
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ amount: inv.amount, status: 'confirmed' })]);
    }
    // The restarted process read the reported blocks again (the cursor was from before them): reports repeated.
    const reads = (n: number) => fake.tron.blockReads.filter((x) => x === n).length;
    for (const i of [0, 1, 2, 3]) expect(reads(first + i)).toBeGreaterThanOrEqual(2);
    const balances = (await api('GET', '/api/company/balances')).body.balances;
    expect(balances).toEqual([{ asset: 'trc20usdt', available: String(PAYMENTS * 100), held: '0', pending: '0', suspense: '0' }]);
    // Every journal, balance and invoice, and what the chain holds at each address (the custody check).
    const verify = await runCli('src/bin/ledger-verify.ts', [], env);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
