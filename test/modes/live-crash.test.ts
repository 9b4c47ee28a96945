// Crash recovery in live mode: the real server (src/bin/server.ts) as a child process with ethereum on a real node (anvil),
// killed with SIGKILL while it credits live payments and while it broadcasts live withdrawals, and restarted on the
// same database; test-mode work of the same merchant is in flight beside it on the sandbox chain. After the restarts
// every payment and deposit is credited once, every withdrawal is on chain once (each receiver holds exactly its amount, one
// transaction per withdrawal from the hot wallet), every event exists once and reaches its own mode's webhook URL
// signed with that mode's secret key, and ledger:verify --mode live (custody on the node included) is clean.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { crashHarness } from '../support/crash-harness.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { runCli, sleep } from '../support/processes.ts';
import type { Received } from '../support/receiver.ts';

const CONFIRMATIONS = 2;
const CHAIN_WAIT_MS = 60_000;
const LIVE_INVOICES = 5;
const LIVE_WITHDRAWALS = 30;
const TEST_WITHDRAWALS = 20;
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;
type Mode = 'test' | 'live';

/**
 * The server's way to the node: a JSON-RPC proxy that can hold each broadcast (eth_sendRawTransaction) for a while,
 * so that a batch of withdrawals takes long enough to be killed in the middle of it.
 */
async function startRpcProxy(target: string): Promise<{ url: string; broadcastDelayMs: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      void (async () => {
        if (proxy.broadcastDelayMs && body.includes('eth_sendRawTransaction')) await sleep(proxy.broadcastDelayMs);
        try {
          const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
        } catch {
          res.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    broadcastDelayMs: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}

/** Locks the transfer row of an invoice's payment from another connection until release(). */
async function holdTransferOf(databaseUrl: string, invoiceId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  // The database is dropped at the end with this connection perhaps still open (a failed test): not an error here.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  const locked = await client.query('SELECT "id" FROM "ChainTransfer" WHERE "invoiceId" = $1 FOR UPDATE', [invoiceId]);
  expect(locked.rowCount).toBe(1);
  return {
    /** Lock requests of other sessions of this database not granted: the server's transaction that wants the row. */
    waiting: async () =>
      Number(
        (
          await client.query(`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid())`)
        ).rows[0].n,
      ),
    release: async () => {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

describe.runIf(ANVIL).each(DATABASES)('live mode across kill -9 on %s (ethereum on anvil)', { timeout: 300_000 }, (kind) => {
  let node: Anvil;
  let proxy: Awaited<ReturnType<typeof startRpcProxy>>;
  // The node first (the server's environment names it), stopped after the harness's teardown.
  beforeAll(async () => {
    node = await startAnvil();
    proxy = await startRpcProxy(node.rpcUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await node?.stop();
  });
  const h = crashHarness(kind, {
    merchant: 'Live Crash',
    webhooks: ['test', 'live'],
    env: () => ({
      // Consolidation off: the hot wallet is funded by hand, so every transaction it signs is a withdrawal.
      ...chainsEnv({ ethereum: { rpcUrl: proxy.url, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 100, sweepIntervalMs: 3_600_000 } }),
      // Short leases: a send or a webhook claim cut short by the kill is taken over soon after the restart.
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_LEASE_MS: '2000',
      WITHDRAWAL_SEND_LEASE_MS: '500',
      WITHDRAWAL_SEND_INTERVAL_MS: '200',
    }),
  });
  const { withDb, kill9 } = h;
  const start = () => h.start();
  const api = (mode: Mode, method: string, p: string, json?: unknown) => h.api(method, p, json, mode);
  const readInvoice = async (id: string) => (await h.api('GET', `/api/invoices/v1/regular/${id}`, undefined, null)).body;
  async function filledInvoice(mode: Mode, invoiceCurrency: string, price: string, paymentCurrency: string) {
    const created = await api(mode, 'POST', '/api/invoices/v1/regular', { invoiceCurrency, items: [{ name: 'Order', price }] });
    expect(created.status, created.text).toBe(201);
    const filled = await h.api('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { clientEmail: 'a@b.co', paymentCurrency }, null);
    expect(filled.status, filled.text).toBe(200);
    return { id: created.body.id as string, address: filled.body.address.address as Address, amount: filled.body.paymentDetails.amount as string };
  }
  async function withdrawalsOf(mode: Mode): Promise<{ uid: string; status: string; txHash: string }[]> {
    const all: { uid: string; status: string; txHash: string }[] = [];
    for (let after: string | null = null; ; ) {
      const res = await api(mode, 'GET', `/api/transactions/withdrawals?limit=100${after ? `&after=${after}` : ''}`);
      expect(res.status, res.text).toBe(200);
      all.push(...res.body.withdrawals);
      after = res.body.nextCursor;
      if (!after) return all;
    }
  }
  /** Mines a block at a time until `check` holds. */
  const mineUntil = <T>(read: () => Promise<T>, check: (value: T) => boolean) =>
    eventually(
      async () => {
        const value = await read();
        if (!check(value)) {
          await node.mine(1);
          await sleep(100);
        }
        return value;
      },
      check,
      CHAIN_WAIT_MS,
    );
  const ledgerVerifyLive = () => runCli('src/bin/ledger-verify.ts', ['--mode', 'live'], h.env);
  /** Every webhook a mode's receiver got: its mode header and both signatures checked with that mode's secret key. */
  function expectOwnModeOnly(mode: Mode, foreignIds: string[]) {
    for (const r of h.receiverOf(mode).received) {
      expect(r.headers['payrail-mode'], r.body).toBe(mode);
      expect(r.specSignatureValid && r.standardSignatureValid, r.body).toBe(true);
      for (const id of foreignIds) expect(r.body).not.toContain(id);
    }
  }
  /** The distinct events (by webhook-id) a receiver got about `id`, as their bodies' status (and txHash). */
  const eventsDelivered = (received: Received[], id: string) => {
    const byId = new Map<string, string>();
    for (const r of received) {
      if (r.json['invoiceId'] !== id && r.json['uid'] !== id && r.json['hash'] !== id) continue;
      const seen = `${String(r.json['status'])}${r.json['txHash'] !== undefined ? ` ${String(r.json['txHash'])}` : ''}`;
      const webhookId = String(r.headers['webhook-id']);
      // A redelivery after the crash is the same event: the same id, the same body.
      if (byId.has(webhookId)) expect(byId.get(webhookId)).toBe(seen);
      byId.set(webhookId, seen);
    }
    return [...byId.values()].sort();
  };

  const paid: { live: string[]; test: string[] } = { live: [], test: [] };

  it('kill -9 while live payments and a deposit are credited (a test payment seen beside them): after the restart each is credited once, its webhooks signed for its mode', async () => {
    const invoices: Awaited<ReturnType<typeof filledInvoice>>[] = [];
    for (let i = 0; i < LIVE_INVOICES; i++) invoices.push(await filledInvoice('live', 'eth', '1', 'eth'));
    for (const [i, invoice] of invoices.entries()) await node.pay(invoice.address, invoice.amount, i % node.payers.length);
    // A deposit to a live static address in the same block.
    const staticAddress = await api('live', 'POST', '/api/static-addresses', { asset: 'eth', internalUserId: 'crash-user' });
    expect(staticAddress.status, staticAddress.text).toBe(201);
    const depositTx = await node.pay(staticAddress.body.address, '0.25', 1);
    const testInvoice = await filledInvoice('test', 'usd', '100', 'trc20usdt');
    const seen = await api('test', 'POST', '/api/sandbox/transfers', { invoiceId: testInvoice.id, amount: testInvoice.amount, confirmations: 0 });
    expect(seen.status, seen.text).toBe(201);
    await node.mine(1);
    for (const invoice of invoices) await eventually(() => readInvoice(invoice.id), (b) => b.status === 'processing', CHAIN_WAIT_MS);

    // The confirming block. On PostgreSQL one payment's transfer row is held locked from here, so the scan that credits
    // them stops at that one's transaction, whatever their order: the server dies with that transaction open and the
    // scan's state unsaved (the credits before it committed). On PGlite (one process: nothing can hold a row from
    // outside) it is killed once before, with the payments seen, and its scan state then is put back after the kill at
    // the first credit seen: the state a crash between the credits and the state's save leaves.
    let seenState: unknown = null;
    if (kind === 'pglite') {
      await kill9();
      seenState = (await withDb((db) => db.chainCursor.findUniqueOrThrow({ where: { network: 'ethereum' } }))).state;
      await start();
    }
    const held = kind === 'postgres' ? await holdTransferOf(h.env['DATABASE_URL']!, invoices.at(-1)!.id) : null;
    await node.mine(CONFIRMATIONS - 1);
    if (held) await eventually(() => held.waiting(), (n) => n > 0, CHAIN_WAIT_MS);
    else await eventually(() => Promise.all(invoices.map((i) => readInvoice(i.id))), (list) => list.some((b) => b.status === 'done'), CHAIN_WAIT_MS);
    await kill9();
    await held?.release();
    const atKill = await withDb(async (db) => {
      if (seenState) await db.chainCursor.update({ where: { network: 'ethereum' }, data: { state: seenState as object } });
      return db.invoice.count({ where: { id: { in: invoices.map((i) => i.id) }, status: 'done' } });
    });
    console.info(`[live crash ${kind}] ${atKill} of ${LIVE_INVOICES} live payments credited at the kill${seenState ? "; the scan state put back to the payments seen" : ""}`);

    await start();
    const confirmed = await api('test', 'POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, {});
    expect(confirmed.status, confirmed.text).toBe(200);
    for (const invoice of invoices) await eventually(() => readInvoice(invoice.id), (b) => b.status === 'done', CHAIN_WAIT_MS);
    expect((await readInvoice(testInvoice.id)).status).toBe('done');
    const deposits = async () => (await api('live', 'GET', '/api/deposits')).body.deposits as { hash: string; status: string }[];
    await eventually(deposits, (list) => list.length === 1 && list[0]!.status === 'done', CHAIN_WAIT_MS);
    expect((await api('test', 'GET', '/api/deposits')).body.deposits).toEqual([]);
    paid.live = invoices.map((i) => i.id);
    paid.test = [testInvoice.id];
    for (const mode of ['live', 'test'] as const) {
      await h.receiverOf(mode).waitFor((r) => paid[mode].every((id) => eventsDelivered(r, id).includes('done')), CHAIN_WAIT_MS);
      for (const id of paid[mode]) expect(eventsDelivered(h.receiverOf(mode).received, id), id).toEqual(['created', 'done', 'pending', 'processing']);
    }
    await h.receiverOf('live').waitFor((r) => eventsDelivered(r, depositTx).includes('done'), CHAIN_WAIT_MS);
    expect(eventsDelivered(h.receiverOf('live').received, depositTx)).toEqual(['done', 'processing']);
    expectOwnModeOnly('live', paid.test);
    expectOwnModeOnly('test', paid.live);
    expect((await api('live', 'GET', '/api/company/balances')).body.balances).toEqual([expect.objectContaining({ asset: 'eth', pending: '0' })]);

    await kill9();
    await withDb(async (db) => {
      for (const [mode, ids] of Object.entries(paid)) {
        for (const id of ids) {
          const transfers = await db.chainTransfer.findMany({ where: { invoiceId: id } });
          expect(transfers.map((t) => [t.mode, t.state]), id).toEqual([[mode, 'confirmed']]);
          const entries = await db.ledgerEntry.findMany({ where: { invoiceId: id } });
          const credits = entries.filter((e) => e.kind === 'payment' && e.account === 'merchant_available');
          expect(credits.map((c) => [c.transferId, c.amount.toFixed()]), id).toEqual([[transfers[0]!.id, transfers[0]!.amount.toFixed()]]);
          expect(new Set(entries.filter((e) => e.kind === 'fee').map((e) => e.journalId)).size, id).toBe(1);
          expect(entries, id).toHaveLength(4);
          const events = await db.event.findMany({ where: { subjectId: id, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } });
          expect(events.map((e) => e.type), id).toEqual(['invoice.created', 'invoice.pending', 'invoice.processing', 'invoice.done']);
        }
      }
      const deposit = await db.chainTransfer.findFirstOrThrow({ where: { txHash: depositTx } });
      expect(deposit).toMatchObject({ mode: 'live', state: 'confirmed', invoiceId: null });
      expect(await db.ledgerEntry.count({ where: { transferId: deposit.id, kind: 'deposit', account: 'merchant_available' } })).toBe(1);
      expect((await db.event.findMany({ where: { subjectId: deposit.id }, orderBy: { seq: 'asc' } })).map((e) => e.type)).toEqual(['deposit.processing', 'deposit.done']);
      expect((await verifyLedger(db)).problems).toEqual([]);
    });
    // The CLI with the server down opens the database itself, and asks the node about every paid address.
    const verified = await ledgerVerifyLive();
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, problems: [], modes: { live: { ok: true } } });
    expect(verified.json.modes.live.journals).toBeGreaterThanOrEqual(2 * LIVE_INVOICES);
    await start();
  });

  it('kill -9 while live withdrawals are broadcast (test ones beside them): each is sent on chain once, every webhook once per event, signed with its mode\'s key', async () => {
    // The live balance the payments and the deposit above left (over 5 eth); a test balance on the sandbox chain.
    const testFund = await filledInvoice('test', 'usd', '1', 'trc20usdt');
    const total = new Money(200).plus((await readInvoice(testFund.id)).paymentDetails.invoiceFee).toFixed();
    expect((await api('test', 'POST', '/api/sandbox/transfers', { invoiceId: testFund.id, amount: total, confirmations: 19 })).status).toBe(201);
    await node.test.setBalance({ address: hot, value: parseEther('100') });
    const liveBefore = (await api('live', 'GET', '/api/company/balances')).body.balances[0].available as string;
    // Each broadcast held 100 ms: the batch of 30 takes seconds, and its sends are recorded only once it is through.
    proxy.broadcastDelayMs = 100;

    const receiversOnChain = Array.from({ length: LIVE_WITHDRAWALS }, () => privateKeyToAccount(generatePrivateKey()).address);
    const liveCall = await api('live', 'POST', '/api/transactions/withdraw', { items: receiversOnChain.map((to) => ({ amount: '0.1', tag: '', to, asset: 'eth' })) });
    const testCall = await api('test', 'POST', '/api/transactions/withdraw', { items: Array.from({ length: TEST_WITHDRAWALS }, () => ({ amount: '5', tag: '', to: TRON, asset: 'trc20usdt' })) });
    for (const call of [liveCall, testCall]) {
      expect(call.status, call.text).toBe(200);
      expect(call.body.every((r: { success: boolean }) => r.success), call.text).toBe(true);
    }
    const live = liveCall.body.map((r: { uid: string }) => r.uid) as string[];
    const test = testCall.body.map((r: { uid: string }) => r.uid) as string[];
    // Killed once the node has three of them: in the middle of the batch.
    await eventually(() => node.public.getTransactionCount({ address: hot, blockTag: 'pending' }), (n) => n >= 3, CHAIN_WAIT_MS);
    await kill9();
    proxy.broadcastDelayMs = 0;

    // Both crash windows of a send are there: on chain but not recorded; claimed (intent recorded) and not signed.
    const windows = await withDb(async (db) => {
      const ws = await db.withdrawal.findMany({ where: { uid: { in: live } } });
      const stored = new Set((await db.chainSend.findMany({ where: { id: { in: live } } })).map((s) => s.id));
      return {
        broadcastNotRecorded: ws.filter((w) => w.stage === 'sending' && !w.txHash && stored.has(w.uid)).length,
        claimedNotSigned: ws.filter((w) => w.stage === 'sending' && !stored.has(w.uid)).length,
      };
    });
    console.info(`[live crash ${kind}] at the kill: ${JSON.stringify(windows)}`);
    expect(windows.broadcastNotRecorded).toBeGreaterThanOrEqual(3);
    expect(windows.claimedNotSigned).toBeGreaterThan(0);

    await start();
    await mineUntil(() => withdrawalsOf('live'), (list) => list.length === LIVE_WITHDRAWALS && list.every((w) => w.status === 'done'));
    await eventually(() => withdrawalsOf('test'), (list) => list.length === TEST_WITHDRAWALS && list.every((w) => w.txHash !== ''), CHAIN_WAIT_MS);

    // On chain: each receiver was paid once, and the hot wallet sent exactly one transaction per withdrawal.
    for (const to of receiversOnChain) expect(await node.public.getBalance({ address: to }), to).toBe(parseEther('0.1'));
    expect(await node.public.getTransactionCount({ address: hot })).toBe(LIVE_WITHDRAWALS);

    // Webhooks: each event delivered (a redelivery after the crash carries the same id and body), to its mode's URL only.
    const liveHooks = (uid: string, w: { txHash: string }) => ['done ' + w.txHash, 'processing ', 'processing ' + w.txHash].sort();
    const finalLive = await withdrawalsOf('live');
    await h.receiverOf('live').waitFor((r) => finalLive.every((w) => eventsDelivered(r, w.uid).length === 3), CHAIN_WAIT_MS);
    for (const w of finalLive) expect(eventsDelivered(h.receiverOf('live').received, w.uid), w.uid).toEqual(liveHooks(w.uid, w));
    const finalTest = await withdrawalsOf('test');
    await h.receiverOf('test').waitFor((r) => finalTest.every((w) => eventsDelivered(r, w.uid).length === 2), CHAIN_WAIT_MS);
    for (const w of finalTest) expect(eventsDelivered(h.receiverOf('test').received, w.uid), w.uid).toEqual(['processing ', `processing ${w.txHash}`]);
    expectOwnModeOnly('live', [...test, ...paid.test]);
    expectOwnModeOnly('test', [...live, ...paid.live]);
    expect((await api('live', 'GET', '/api/company/balances')).body.balances).toEqual([
      expect.objectContaining({ asset: 'eth', available: new Money(liveBefore).minus(new Money('0.1005').times(LIVE_WITHDRAWALS)).toFixed(), held: '0' }),
    ]);

    await kill9();
    await withDb(async (db) => {
      const sends = await db.chainSend.findMany({ where: { fromAddress: hot } });
      expect(new Set(sends.map((s) => s.id))).toEqual(new Set(live));
      const byId = new Map(sends.map((s) => [s.id, s]));
      for (const w of await db.withdrawal.findMany({ where: { uid: { in: live } } })) expect(w.txHash, w.uid).toBe(byId.get(w.uid)!.txHash);
      // The test ones went to the sandbox chain only, once each; no live one did.
      const simulated = await db.sandboxBroadcast.findMany({ where: { transferId: { in: [...live, ...test] } } });
      expect(simulated.map((b) => b.transferId).sort()).toEqual([...test].sort());
      const events = await db.event.groupBy({ by: ['subjectId', 'type'], where: { subjectId: { in: [...live, ...test] } }, _count: true });
      for (const e of events) expect([e.subjectId, e.type, e._count]).toEqual([e.subjectId, e.type, e.type === 'withdrawal.processing' ? 2 : 1]);
      expect(events.filter((e) => e.type === 'withdrawal.done').map((e) => e.subjectId).sort()).toEqual([...live].sort());
      const report = await verifyLedger(db);
      expect(report.problems).toEqual([]);
      expect(report.modes).toMatchObject({ live: { ok: true }, test: { ok: true } });
    });
    const verified = await ledgerVerifyLive();
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, problems: [], modes: { live: { ok: true, problems: 0 } } });
  });
});
