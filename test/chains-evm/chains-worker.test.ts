// CHAIN_WORKER=0: the API server never loads the signer and runs no watcher or sender; `npm run chains:worker`, a
// process of its own with the mnemonic, watches anvil, credits payments, sends withdrawals and refunds. The server
// only records and queues, and reads the worker's progress for its health.
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { freePort } from '../support/net.ts';
import { launch, sleep, stopAllChildren, waitForExit, type Proc } from '../support/processes.ts';
import { useServer } from '../support/server.ts';

const CONFIRMATIONS = 2;
const WAIT_MS = 30_000;
const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;

describe.runIf(ANVIL && DATABASES.includes('postgres'))('the chains worker beside a server with CHAIN_WORKER=0', { timeout: 120_000 }, () => {
  let node: Anvil;
  let chains: Record<string, string>;
  let worker: Proc;
  let workerOps = '';
  const METRICS_TOKEN = 'worker-metrics-token-of-the-test-0001';
  const env: Record<string, string> = { CHAIN_WORKER: '0', WITHDRAWAL_SEND_INTERVAL_MS: '60000', REFUND_RETRY_INTERVAL_MS: '60000' };
  beforeAll(async () => {
    node = await startAnvil();
    chains = chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100, sweepIntervalMs: 3_600_000 } });
    // The server's environment has the chains file, not the mnemonic.
    env['CHAINS_FILE'] = chains['CHAINS_FILE']!;
    env['RATES_CONFIG'] = chains['RATES_CONFIG']!;
  });
  const server = useServer('postgres', env);
  beforeAll(async () => {
    // Sends wake at once on the server's events (over PostgreSQL NOTIFY): the long intervals above prove it.
    const port = await freePort();
    worker = launch('src/bin/chains-worker.ts', [], {
      ...chains,
      DATABASE_URL: server.databaseUrl,
      LOG_LEVEL: 'info',
      WITHDRAWAL_SEND_INTERVAL_MS: '60000',
      REFUND_RETRY_INTERVAL_MS: '60000',
      WORKER_METRICS_PORT: String(port),
      METRICS_TOKEN,
    });
    await worker.waitForStdout((out) => out.includes('chains worker running'), 'the chains worker to start');
    workerOps = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    if (worker) await waitForExit(worker);
    await node?.stop();
    await stopAllChildren();
  });

  const read = async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
  const mineUntil = <T>(get: () => Promise<T>, check: (value: T) => boolean) =>
    eventually(
      async () => {
        const value = await get();
        if (!check(value)) {
          await node.mine(1);
          await sleep(100);
        }
        return value;
      },
      check,
      WAIT_MS,
    );
  async function invoice(token: string, price: string) {
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'eth', items: [{ name: 'Order', price }] } });
    const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: 'eth' } });
    expect(filled.status, filled.text).toBe(200);
    return { id: created.body.id as string, address: filled.body.address.address as Address, amount: filled.body.paymentDetails.amount as string };
  }

  it('the server runs no watcher and no sender, holds no signer, and reports the worker\'s scans in /health', async () => {
    const names = server.app.jobs.jobs.map((j) => j.name);
    expect(names).toContain('chain-health');
    for (const absent of ['chain-watcher:ethereum', 'withdrawal-sender', 'refund-sender']) expect(names).not.toContain(absent);
    expect(server.app.platform.chains.sendsHere).toBe(false);
    const health = await eventually(
      async () => (await (await fetch(`${server.url}/health`)).json()) as { status: string; chains: { network: string; state: string }[] },
      (h) => h.chains.find((c) => c.network === 'ethereum')?.state === 'ok',
      WAIT_MS,
    );
    expect(health.status).toBe('ok');
    expect(worker.stdout).toContain('"jobs":["chain-watcher:ethereum","refund-sender","autoswap-driver","withdrawal-sender"]');
  });

  it('the worker credits a payment, sends a withdrawal and a refund the server queued', async () => {
    const m = await server.liveMerchant();
    const paid = await invoice(m.publicToken, '2');
    await node.pay(paid.address, paid.amount, 0);
    await mineUntil(() => read(paid.id), (b) => b.status === 'done');

    await node.test.setBalance({ address: hot, value: parseEther('10') });
    const to = node.payers[3]!.address;
    const start = await node.public.getBalance({ address: to });
    const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '0.5', tag: '', to, asset: 'eth' }] } });
    expect(res.body[0], res.text).toMatchObject({ success: true });
    const withdrawal = () => server.request('GET', `/api/transactions/withdrawals/${res.body[0].uid}`, { token: m.publicToken }).then((r) => r.body);
    await mineUntil(withdrawal, (w) => w.status === 'done');
    expect(await node.public.getBalance({ address: to })).toBe(start + parseEther('0.5'));

    const short = await invoice(m.publicToken, '1');
    await node.pay(short.address, '0.4', 1);
    await mineUntil(() => read(short.id), (b) => b.status === 'wrong');
    const refunded = await server.request('POST', `/api/invoices/v1/regular/${short.id}/refund`, { token: m.publicToken, json: { address: node.payers[1]!.address } });
    expect(refunded.status, refunded.text).toBe(200);
    // The server only queued it: it holds no key to send with.
    expect(refunded.body.refund).toMatchObject({ status: 'queued', txHash: null });
    const confirmed = await mineUntil(async () => (await read(short.id)).refund, (r) => r.status === 'confirmed');
    expect(confirmed.txHash).toMatch(/^0x[0-9a-f]{64}$/);

    // What the worker committed is counted in its own metrics, on its own listener (WORKER_METRICS_PORT).
    expect((await fetch(`${workerOps}/metrics`)).status).toBe(401);
    const scraped = await (await fetch(`${workerOps}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(scraped)?.[1] ?? NaN);
    expect(value('payrail_invoice_transitions_total{status="processing"}')).toBe(2);
    expect(value('payrail_invoice_transitions_total{status="done"}')).toBe(1);
    expect(value('payrail_invoice_transitions_total{status="wrong"}')).toBe(1);
    expect(value('payrail_withdrawal_transitions_total{status="done"}')).toBe(1);
    // Created, filled and refunded through the server: not the worker's.
    expect(value('payrail_invoice_transitions_total{status="created"}')).toBe(0);
    expect(value('payrail_invoice_transitions_total{status="refunded"}')).toBe(0);
    expect((await fetch(`${workerOps}/health/ready`)).status).toBe(200);
  });
});
