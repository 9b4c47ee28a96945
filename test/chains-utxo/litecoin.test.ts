// The UTXO adapter end to end: the real server on a real `litecoind -regtest` (docs/chains-utxo.md). Payments seen,
// confirmed and reorganised; consolidation into the hot wallet and a withdrawal paid from it, with its webhooks at a
// real receiver; a restart with a scan repeated from an older cursor; the custody check of ledger:verify.
import { randomBytes, randomUUID } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { p2tr } from '@scure/btc-signer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutgoingTransfer, TransferReport } from '../../src/chains/adapter.ts';
import { utxoChainSchema } from '../../src/chains/config.ts';
import { custodyProblems } from '../../src/chains/custody.ts';
import type { ChainContext } from '../../src/chains/registry.ts';
import { Signer } from '../../src/chains/signer.ts';
import { sendInputs, storeSend } from '../../src/chains/store.ts';
import { utxoAdapter, type UtxoAdapter } from '../../src/chains/utxo/adapter.ts';
import { chainDescriptor } from '../../src/chains/utxo/descriptors.ts';
import { deriveAddress, parseExtendedPublicKey } from '../../src/chains/hd.ts';
import { SIGNER_NETWORKS } from '../../src/chains/utxo/networks.ts';
import { coins } from '../../src/chains/utxo/rpc.ts';
import { coinText, toSats } from '../../src/chains/utxo/transactions.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { toMoney } from '../../src/domain/money.ts';
import { createLogger } from '../../src/logger.ts';
import { verifyLedger } from '../../src/features.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES, freshDatabase, type DbKind, type TestDatabase } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { LITECOIND, useLitecoind, type Litecoind } from '../support/litecoind.ts';
import { freePort, runCli, sleep, stopAllChildren, tempDir } from '../support/processes.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const CONFIRMATIONS = 2;
/** The servers' fee rate (sat/vB), fixed so that a send's fee tells the size it was computed for. */
const FEE_RATE = 2n;
/** Scans run every 200 ms; a loaded machine may still take seconds for one. */
const CHAIN_WAIT_MS = 30_000;
const account = parseExtendedPublicKey(testXpub('litecoin', true));

/** A server whose litecoin runs on `node`, in its own node wallet; the other networks stay on the sandbox. */
function litecoinServer(kind: DbKind, ltc: { readonly node: Litecoind }, wallet: string, options: { signer?: boolean } = {}): TestServer & { env: Record<string, string> } {
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WITHDRAWAL_SEND_INTERVAL_MS: '200' };
  beforeAll(() => {
    const chains = chainsEnv({
      litecoin: {
        rpcUrl: ltc.node.rpcUrl,
        wallet,
        xpub: testXpub('litecoin', true),
        chain: 'regtest',
        confirmations: CONFIRMATIONS,
        pollMs: 200,
        sweepIntervalMs: 0,
        feeRate: Number(FEE_RATE),
      },
    });
    if (options.signer === false) delete chains['SIGNER_MNEMONIC'];
    Object.assign(env, chains);
  });
  return Object.assign(useServer(kind, env, { logLevel: 'info' }), { env });
}

function helpers(server: TestServer, ltc: { readonly node: Litecoind }, wallet: string) {
  const read = async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
  return {
    read,
    /** Waits (bounded) until the invoice satisfies `check`. */
    until: (id: string, check: (invoice: any) => boolean) => eventually(() => read(id), check, CHAIN_WAIT_MS),
    /** An invoice of `price` ltc, filled with ltc: its address and the amount due. */
    async invoice(token: string, price = '1') {
      const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'ltc', items: [{ name: 'Order', price }] } });
      expect(created.status, created.text).toBe(201);
      const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: 'ltc' } });
      expect(filled.status, filled.text).toBe(200);
      return { id: created.body.id as string, address: filled.body.address.address as string, amount: filled.body.paymentDetails.amount as string };
    },
    async merchant(receiver?: Receiver) {
      const m = await server.liveMerchant();
      if (receiver) {
        const res = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } });
        expect(res.status).toBe(200);
      }
      return m;
    },
    balance: async (token: string) =>
      ((await server.request('GET', '/api/company/balances', { token })).body.balances as { asset: string }[]).find((b) => b.asset === 'ltc') ?? { available: '0', pending: '0' },
    watched: async (address: string) => {
      const info = await ltc.node.node.wallet(wallet).call<{ iswatchonly: boolean; ismine: boolean }>('getaddressinfo', [address]);
      return info.iswatchonly || info.ismine;
    },
    custody: () => custodyProblems(server.app.db.prisma, server.app.platform.chains.custodySources()),
    /** Mines until no send of ours is open (consolidations and withdrawals final). */
    async settleSends() {
      await eventually(
        async () => {
          const open = await server.app.db.prisma.chainSend.count({ where: { network: 'litecoin', status: { in: ['signed', 'sent'] } } });
          if (open > 0) await ltc.node.mine(1);
          return open;
        },
        (open) => open === 0,
        CHAIN_WAIT_MS,
      );
    },
  };
}

/** Invoice webhooks received for `id`, their statuses in order. */
const invoiceHooks = (receiver: Receiver, id: string) => receiver.received.filter((r) => r.json['invoiceId'] === id || r.json['id'] === id).map((r) => r.json['status']);

describe.runIf(LITECOIND)('the UTXO adapter on litecoind -regtest', () => {
  const ltc = useLitecoind();
  afterAll(stopAllChildren);

  describe.each(DATABASES)('payments through the server on %s', (kind) => {
    const wallet = `payrail-${kind}`;
    const server = litecoinServer(kind, ltc, wallet);
    const h = helpers(server, ltc, wallet);
    let receiver: Receiver;
    let secret = '';
    beforeAll(async () => {
      receiver = await startReceiver(() => secret);
    });
    afterAll(async () => receiver?.close());

    it('an ltc invoice gets a regtest address the node watches (and the lookahead beyond it); paid, it is processing; done after 2 confirmations', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const invoice = await h.invoice(m.publicToken, '1');
      const derived = await server.app.db.prisma.derivedAddress.findUniqueOrThrow({ where: { network_address: { network: 'litecoin', address: invoice.address } } });
      expect(invoice.address).toBe(deriveAddress(account, 'litecoin', derived.index, { regtest: true }));
      expect(invoice.address).toMatch(/^rltc1q/);
      expect(await h.watched(invoice.address)).toBe(true);
      expect(await h.watched(deriveAddress(account, 'litecoin', derived.index + 20, { regtest: true }))).toBe(true);

      const txid = await ltc.node.pay(invoice.address, invoice.amount);
      const seen = await h.until(invoice.id, (b) => b.status === 'processing');
      expect(seen.invoiceTransactions).toEqual([expect.objectContaining({ txHash: txid, amount: invoice.amount, confirmations: 0, status: 'seen' })]);
      expect(await h.balance(m.publicToken)).toMatchObject({ available: '0', pending: invoice.amount });

      await ltc.node.mine(1);
      const once = await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      expect(once.status).toBe('processing');
      await ltc.node.mine(1);
      const done = await h.until(invoice.id, (b) => b.status === 'done');
      expect(done.paymentDetails.paidAmount).toBe(invoice.amount);
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ txHash: txid, confirmations: 2, status: 'confirmed' })]);
      expect(await h.balance(m.publicToken)).toMatchObject({ available: '1', pending: '0' });
      await receiver.waitFor(() => invoiceHooks(receiver, invoice.id).includes('done'), CHAIN_WAIT_MS);
      expect(invoiceHooks(receiver, invoice.id)).toEqual(['created', 'pending', 'processing', 'done']);
    });

    it('an underpaid invoice is wrong once the payment is final', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      await ltc.node.pay(invoice.address, '0.5');
      await h.until(invoice.id, (b) => b.status === 'processing');
      await ltc.node.mine(CONFIRMATIONS);
      const wrong = await h.until(invoice.id, (b) => b.status === 'wrong');
      expect(wrong.paymentDetails.paidAmount).toBe('0.5');
    });

    it('a payment a reorg removes before it counts is dropped, never credited; the invoice waits', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      const txid = await ltc.node.pay(invoice.address, invoice.amount);
      await ltc.node.mine(1);
      await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      // The block holding the payment leaves the chain; a block spending its input elsewhere takes its place.
      await ltc.node.doubleSpend(txid, CONFIRMATIONS - 1);
      const dropped = await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.status === 'dropped');
      expect(dropped.status).toBe('processing');
      await ltc.node.mine(CONFIRMATIONS);
      await sleep(1_000);
      const after = await h.read(invoice.id);
      expect(after.status).toBe('processing');
      expect(after.paymentDetails.paidAmount).toBe('0');
      expect(await h.balance(m.publicToken)).toMatchObject({ available: '0', pending: '0' });
      expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: invoice.id } })).toBe(0);
    });

    it('a payment a shallow reorg puts back into the mempool is credited once when it is mined again', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      const txid = await ltc.node.pay(invoice.address, invoice.amount);
      await ltc.node.mine(1);
      await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      await ltc.node.node.call('invalidateblock', [await ltc.node.blockOf(txid)]);
      await sleep(500); // a scan or two see it unconfirmed again
      await ltc.node.mine(CONFIRMATIONS);
      const done = await h.until(invoice.id, (b) => b.status === 'done');
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ txHash: txid, status: 'confirmed' })]);
      expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: invoice.id, kind: 'payment' } })).toBe(2);
    });

    it('a restart, and a scan repeated from an older cursor (a crash between reporting and saving), lose and duplicate nothing', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const cursor = async () => (await server.app.db.prisma.chainCursor.findUniqueOrThrow({ where: { network: 'litecoin' } })).state;
      const before = await cursor();
      const first = await h.invoice(m.publicToken, '1');
      const firstTx = await ltc.node.pay(first.address, first.amount);
      await h.until(first.id, (b) => b.status === 'processing');
      await ltc.node.mine(CONFIRMATIONS);
      await h.until(first.id, (b) => b.status === 'done');
      const second = await h.invoice(m.publicToken, '2');
      let secondTx = '';
      await server.restart(async () => {
        // While the server is down: a payment arrives and is mined, and the last saved cursor is lost.
        secondTx = await ltc.node.pay(second.address, second.amount);
        await ltc.node.mine(1);
        const database = await openDatabase({ url: server.databaseUrl, role: 'test' });
        try {
          await database.prisma.$executeRaw`UPDATE "ChainCursor" SET "state" = ${JSON.stringify(before)}::jsonb WHERE "network" = 'litecoin'`;
        } finally {
          await database.close();
        }
      });
      await h.until(second.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      await ltc.node.mine(1);
      await h.until(second.id, (b) => b.status === 'done');
      await sleep(1_000); // more scans: nothing more may happen

      const db = server.app.db.prisma;
      for (const [invoice, txid] of [[first, firstTx], [second, secondTx]] as const) {
        expect(await db.chainTransfer.count({ where: { network: 'litecoin', txHash: txid } })).toBe(1);
        expect(await db.ledgerEntry.count({ where: { invoiceId: invoice.id, kind: 'payment' } })).toBe(2);
        const statuses = (await db.event.findMany({ where: { subjectId: invoice.id, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } })).map((e) => (e.payload as { status: string }).status);
        expect(statuses.filter((s) => s === 'done')).toHaveLength(1);
        await receiver.waitFor(() => invoiceHooks(receiver, invoice.id).includes('done'), CHAIN_WAIT_MS);
      }
      expect(invoiceHooks(receiver, first.id)).toEqual(['created', 'pending', 'processing', 'done']);
      expect(invoiceHooks(receiver, second.id)).toEqual(['created', 'pending', 'processing', 'done']);
      expect(await h.balance(m.publicToken)).toMatchObject({ available: '3', pending: '0' });
    });

    it('a withdrawal is paid from the hot wallet (filled by consolidating paid invoices): its three webhooks arrive', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const invoice = await h.invoice(m.publicToken, '2');
      await ltc.node.pay(invoice.address, invoice.amount);
      await ltc.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');

      const to = await ltc.node.miner.call<string>('getnewaddress', ['', 'bech32']);
      const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '0.5', tag: '', to, asset: 'ltc' }] } });
      expect(res.body[0], res.text).toMatchObject({ success: true });
      const uid = res.body[0].uid as string;
      const withdrawal = () => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }).then((r) => r.body);
      // Consolidated deposits become spendable in the hot wallet after a block.
      const sent = await eventually(
        async () => {
          const w = await withdrawal();
          if (!w.txHash) await ltc.node.mine(1);
          return w;
        },
        (w) => Boolean(w.txHash),
        CHAIN_WAIT_MS,
      );
      // On the network (in the mempool, or already in a block mined while waiting).
      expect(await ltc.node.node.call<{ txid: string }>('getrawtransaction', [sent.txHash, true])).toMatchObject({ txid: sent.txHash });
      await ltc.node.mine(CONFIRMATIONS);
      const done = await eventually(withdrawal, (w) => w.status === 'done', CHAIN_WAIT_MS);
      expect(done.txHash).toBe(sent.txHash);
      expect(coins(await ltc.node.miner.call('getreceivedbyaddress', [to, 1])).toFixed()).toBe('0.5');

      const hooks = () => receiver.received.filter((r) => r.json['uid'] === uid);
      await receiver.waitFor(() => hooks().some((r) => r.json['status'] === 'done'), CHAIN_WAIT_MS);
      expect(hooks().map((r) => [r.json['status'], r.json['txHash']])).toEqual([
        ['processing', ''],
        ['processing', sent.txHash],
        ['done', sent.txHash],
      ]);
      const send = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: uid } });
      expect(send).toMatchObject({ purpose: 'withdrawal', status: 'confirmed', txHash: sent.txHash, toAddress: to });
      expect(send.fee!.gt(0)).toBe(true);
      const sweeps = await server.app.db.prisma.chainSend.findMany({ where: { network: 'litecoin', purpose: 'sweep' } });
      expect(sweeps.length).toBeGreaterThan(0);
    });

    it('withdrawals to every output type (P2PKH, P2SH, P2WPKH, P2TR) arrive with the script and amount asked; their fees count each output at its size', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      await ltc.node.pay(invoice.address, invoice.amount);
      await ltc.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');

      // litecoind 0.21 hands out no Taproot address: one of a key of ours (BIP-86, no script path), built with btc-signer.
      const taproot = p2tr(schnorr.getPublicKey(randomBytes(32)), undefined, SIGNER_NETWORKS.litecoin.regtest);
      const targets: [string, string][] = [
        ['P2PKH', await ltc.node.miner.call<string>('getnewaddress', ['', 'legacy'])],
        ['P2SH', await ltc.node.miner.call<string>('getnewaddress', ['', 'p2sh-segwit'])],
        ['P2WPKH', await ltc.node.miner.call<string>('getnewaddress', ['', 'bech32'])],
        ['P2TR', taproot.address!],
      ];
      expect(targets.map(([, address]) => address[0] === 'r' ? address.slice(0, 6) : address[0])).toEqual([expect.stringMatching(/^[mn]$/), 'Q', 'rltc1q', 'rltc1p']);
      const res = await server.request('POST', '/api/transactions/withdraw', {
        token: m.publicToken,
        json: { items: targets.map(([, to]) => ({ amount: '0.1', tag: '', to, asset: 'ltc' })) },
      });
      expect(res.body.map((r: { success: boolean }) => r.success), res.text).toEqual([true, true, true, true]);
      const uids = res.body.map((r: { uid: string }) => r.uid) as string[];
      const withdrawals = () => Promise.all(uids.map((uid) => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }).then((r) => r.body)));
      // The hot wallet spends confirmed coins only: blocks until every withdrawal is sent.
      await eventually(
        async () => {
          const all = await withdrawals();
          if (all.some((w) => !w.txHash)) await ltc.node.mine(1);
          return all;
        },
        (all) => all.every((w) => Boolean(w.txHash)),
        CHAIN_WAIT_MS,
      );
      await ltc.node.mine(CONFIRMATIONS);
      const done = await eventually(withdrawals, (all) => all.every((w) => w.status === 'done'), CHAIN_WAIT_MS);

      for (const [i, [type, address]] of targets.entries()) {
        const send = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: uids[i]! } });
        expect(send.txHash).toBe(done[i].txHash);
        // The node's own reading of the address and of the transaction we signed.
        const { scriptPubKey } = await ltc.node.node.call<{ scriptPubKey: string }>('validateaddress', [address]);
        if (type === 'P2TR') expect(scriptPubKey).toBe(`5120${hex.encode(taproot.tweakedPubkey)}`);
        const tx = await ltc.node.node.call<{ vsize: number; vin: unknown[]; vout: { n: number; value: unknown; scriptPubKey: { hex: string } }[] }>('decoderawtransaction', [send.rawTx]);
        const paid = tx.vout.filter((o) => o.scriptPubKey.hex === scriptPubKey);
        expect(paid.map((o) => coins(o.value).toFixed()), type).toEqual(['0.1']);
        const output = await ltc.node.node.call<{ value: unknown; confirmations: number; scriptPubKey: { hex: string } } | null>('gettxout', [send.txHash, paid[0]!.n]);
        expect(output && { value: coins(output.value).toFixed(), script: output.scriptPubKey.hex }, type).toEqual({ value: '0.1', script: scriptPubKey });
        expect(output!.confirmations).toBeGreaterThanOrEqual(CONFIRMATIONS);
        // At the fixed rate the fee tells the size it was computed for: not below the signed transaction's, at most a
        // byte per input or output above.
        const estimated = Number(toSats(send.fee!) / FEE_RATE);
        expect(estimated, type).toBeGreaterThanOrEqual(tx.vsize);
        expect(estimated - tx.vsize, type).toBeLessThanOrEqual(tx.vin.length + tx.vout.length);
      }
    });

    it('ledger:verify finds nothing wrong, the custody check included (every paid address asked of the node)', async () => {
      // Its own payment, final and swept into the hot wallet, so neither check runs over nothing.
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      await ltc.node.pay(invoice.address, invoice.amount);
      await ltc.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');
      const db = server.app.db.prisma;
      const sweptFrom = async (address: string) =>
        (await db.chainSend.findMany({ where: { network: 'litecoin', purpose: 'sweep', status: 'confirmed' } })).filter((s) => sendInputs(s.inputs).some((i) => i.address === address));
      await eventually(
        async () => {
          const swept = await sweptFrom(invoice.address);
          if (swept.length === 0) await ltc.node.mine(1);
          return swept;
        },
        (swept) => swept.length === 1,
        CHAIN_WAIT_MS,
      );
      await h.settleSends();
      const custody = await h.custody();
      expect(custody.problems).toEqual([]);
      expect(custody.addresses).toBeGreaterThanOrEqual(1);
      const report = await verifyLedger(db, server.app.platform.chains.custodySources());
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      const journals = await db.ledgerEntry.groupBy({ by: ['journalId', 'kind'], where: { companyId: m.tenantId } });
      expect(journals.map((j) => j.kind).sort()).toEqual(['fee', 'payment']);
      expect(report.journals).toBeGreaterThanOrEqual(journals.length);
      if (kind === 'postgres') {
        // `npm run ledger:verify` itself, in its own process: it opens the chains of CHAINS_FILE for the custody check.
        const cli = await runCli('src/bin/ledger-verify.ts', [], { DATA_DIR: tempDir(), DATABASE_URL: server.databaseUrl, CHAINS_FILE: server.env['CHAINS_FILE']!, LOG_LEVEL: 'silent' });
        expect(cli.code, cli.stderr).toBe(0);
        expect(cli.json).toMatchObject({ ok: true, problems: [] });
      }
      // Swept addresses hold nothing any more; the hot wallet holds what came in less what went out and the fees.
      const sweeps = await server.app.db.prisma.chainSend.findMany({ where: { network: 'litecoin', purpose: 'sweep', status: 'confirmed' } });
      expect(sweeps.every((s) => s.fee !== null && Array.isArray(s.inputs))).toBe(true);
    });
  });
  describe('a reorg after a payment counted (a watch-only server: it consolidates nothing)', () => {
    const kind = DATABASES.at(-1)!;
    const wallet = 'payrail-watch-only';
    const server = litecoinServer(kind, ltc, wallet, { signer: false });
    const h = helpers(server, ltc, wallet);

    it('keeps the credit, logs an error that says what to do, and ledger:verify names the address', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, '1');
      const txid = await ltc.node.pay(invoice.address, invoice.amount);
      await h.until(invoice.id, (b) => b.status === 'processing');
      await ltc.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');
      expect((await h.custody()).problems).toEqual([]);

      await ltc.node.doubleSpend(txid, 1);
      const lost = await eventually(
        async () => server.logs.filter((l) => String(l['msg']).startsWith('a credited payment lost its confirmations') && l['txHash'] === txid),
        (lines) => lines.length > 0,
        CHAIN_WAIT_MS,
      );
      expect(lost[0]).toMatchObject({ level: 50, network: 'litecoin', address: invoice.address, outputIndex: expect.any(Number) });
      expect(String(lost[0]!['msg'])).toContain('docs/chains-utxo.md');
      const after = await h.read(invoice.id);
      expect(after.status).toBe('done');
      expect(await h.balance(m.publicToken)).toMatchObject({ available: '1' });

      await ltc.node.mine(1);
      const report = await verifyLedger(server.app.db.prisma, server.app.platform.chains.custodySources());
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([{ check: 'chain-custody', mode: 'live', key: `litecoin/${invoice.address}/ltc`, expected: invoice.amount, actual: '0' }]);
    });
  });

  describe('the adapter alone', () => {
    let database: Database;
    let testDatabase: TestDatabase;
    beforeAll(async () => {
      testDatabase = await freshDatabase(DATABASES.at(-1)!);
      database = await openDatabase({ url: testDatabase.url, role: 'test' });
    });
    afterAll(async () => {
      await database?.close();
      await testDatabase?.drop();
    });
    const reports: TransferReport[] = [];
    const context = (signer: Signer | null = testSigner): ChainContext => ({
      db: database.prisma,
      sendsHere: true,
      logger: createLogger('silent'),
      signer,
      report: async (r) => void reports.push(r),
      reportOutgoing: async () => undefined,
    });
    const settings = (overrides: Record<string, unknown> = {}) =>
      utxoChainSchema.parse({ rpcUrl: ltc.node.rpcUrl, wallet: 'adapter-alone', xpub: testXpub('litecoin', true), chain: 'regtest', confirmations: CONFIRMATIONS, ...overrides });
    const other = Signer.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');

    it('refuses to start on another chain, with an xpub the signer does not own, or a node that does not answer', async () => {
      await expect(utxoAdapter('litecoin', settings({ chain: 'main', xpub: testXpub('litecoin', false) }), context()).connect()).rejects.toThrow(
        'the node is on chain "regtest", CHAINS_FILE says "main"',
      );
      await expect(utxoAdapter('litecoin', settings({ xpub: other.accountXpub('litecoin', true) }), context()).connect()).rejects.toThrow(/not the signer's account m\/84'\/1'\/0'/);
      // Without a signer (a process that only watches) any account may be watched.
      await expect(utxoAdapter('litecoin', settings({ xpub: other.accountXpub('litecoin', true), wallet: 'someone-else' }), context(null)).connect()).resolves.toBeUndefined();
      const closed = new URL(ltc.node.rpcUrl);
      closed.port = String(await freePort());
      await expect(utxoAdapter('litecoin', settings({ rpcUrl: closed.toString() }), context()).connect()).rejects.toThrow(/does not answer/);
      const wrong = new URL(ltc.node.rpcUrl);
      wrong.password = 'wrong';
      await expect(utxoAdapter('litecoin', settings({ rpcUrl: wrong.toString() }), context()).connect()).rejects.toThrow(/refused our credentials/);
    });

    it('creates its wallet watch-only and watches both chains with descriptors whose checksums are the node\'s', async () => {
      const adapter = utxoAdapter('litecoin', settings(), context()) as UtxoAdapter;
      await adapter.connect();
      const wallet = ltc.node.node.wallet('adapter-alone');
      expect(await wallet.call('getwalletinfo')).toMatchObject({ private_keys_enabled: false, descriptors: false });
      expect(await wallet.call('getaddressinfo', [adapter.hotAddress])).toMatchObject({ iswatchonly: true, ischange: true });
      for (const chain of [0, 1] as const) {
        for (const network of ['litecoin', 'bitcoin-cash'] as const) {
          const descriptor = chainDescriptor(network, account, true, chain);
          const { checksum } = await ltc.node.node.call<{ checksum: string }>('getdescriptorinfo', [descriptor.split('#')[0]]);
          expect(descriptor).toBe(`${descriptor.split('#')[0]}#${checksum}`);
        }
      }
      // A second start finds what the node watches already and imports nothing again.
      await utxoAdapter('litecoin', settings(), context()).connect();
    });

    it('refuses hostile sends before anything is signed or stored', async () => {
      const adapter = utxoAdapter('litecoin', settings(), context());
      const send = (fields: Partial<OutgoingTransfer>) =>
        adapter.send({ id: randomUUID(), purpose: 'withdrawal', asset: 'ltc', to: ltc.node.minerAddress, tag: null, amount: toMoney('0.1'), ...fields });
      const ours = deriveAddress(account, 'litecoin', 0, { regtest: true });
      const corrupted = `${ours.slice(0, -1)}${ours.endsWith('q') ? 'p' : 'q'}`;
      await expect(send({ to: corrupted })).rejects.toThrow(/not a litecoin regtest address/);
      // Valid elsewhere: Litecoin main, Bitcoin regtest.
      await expect(send({ to: deriveAddress(account, 'litecoin', 0) })).rejects.toThrow(/not a litecoin regtest address/);
      await expect(send({ to: deriveAddress(account, 'bitcoin', 0, { regtest: true }) })).rejects.toThrow(/not a litecoin regtest address/);
      await expect(send({ to: `${ltc.node.minerAddress}\u0000` })).rejects.toThrow(/not a litecoin regtest address/);
      await expect(send({ to: 'x'.repeat(10_000) })).rejects.toThrow(/not a litecoin regtest address/);
      await expect(send({ tag: '12345' })).rejects.toThrow(/takes no tag/);
      await expect(send({ asset: 'btc' })).rejects.toThrow(/sends only ltc/);
      await expect(send({ amount: toMoney('0.123456789') })).rejects.toThrow(/whole number of satoshis/);
      await expect(send({ amount: toMoney('0.00000100') })).rejects.toThrow(/dust/);
      // Litecoin's dust limits are ten times Bitcoin's, and a P2PKH output's is the highest.
      await expect(send({ amount: toMoney('0.00002939') })).rejects.toThrow(/dust/);
      await expect(send({ to: await ltc.node.miner.call<string>('getnewaddress', ['', 'legacy']), amount: toMoney('0.00005459') })).rejects.toThrow(/dust/);
      await expect(send({ amount: toMoney('-1') })).rejects.toThrow(/positive/);
      expect(await database.prisma.chainSend.count()).toBe(0);
    });

    it('says so when the hot wallet cannot pay yet, and stores nothing', async () => {
      const adapter = utxoAdapter('litecoin', settings({ wallet: 'adapter-empty-hot' }), context());
      await expect(
        adapter.send({ id: randomUUID(), purpose: 'withdrawal', asset: 'ltc', to: ltc.node.minerAddress, tag: null, amount: toMoney('0.1') }),
      ).rejects.toThrow(/the hot wallet cannot pay 0\.10000000 ltc now: it holds 0\.00000000 confirmed/);
      expect(await database.prisma.chainSend.count()).toBe(0);
    });

    it('sends never spend the same coins: concurrent ones take one each, a coin an unbroadcast send holds stays reserved', async () => {
      const adapter = utxoAdapter('litecoin', settings({ wallet: 'adapter-concurrent' }), context()) as UtxoAdapter;
      await adapter.connect();
      for (let i = 0; i < 3; i++) await ltc.node.pay(adapter.hotAddress, '1');
      await ltc.node.mine(1);
      // A send stored before a crash, never broadcast: its coin is not spent on chain, but it is taken.
      const [held] = await ltc.node.node.wallet('adapter-concurrent').call<{ txid: string; vout: number }[]>('listunspent', [1, 9_999_999, [adapter.hotAddress]]);
      const crashed = { id: randomUUID(), network: 'litecoin' as const, purpose: 'refund' as const, asset: 'ltc', fromAddress: adapter.hotAddress, toAddress: ltc.node.minerAddress };
      await storeSend(database.prisma, { ...crashed, tag: null, amount: '0.5', rawTx: '00', txHash: 'f'.repeat(64), nonce: null, inputs: [{ address: adapter.hotAddress, amount: '1', txid: held!.txid, vout: held!.vout }] });

      const outcomes = await Promise.allSettled(
        Array.from({ length: 4 }, () => adapter.send({ id: randomUUID(), purpose: 'refund', asset: 'ltc', to: ltc.node.minerAddress, tag: null, amount: toMoney('0.6') })),
      );
      const sent = outcomes.filter((o): o is PromiseFulfilledResult<{ txHash: string }> => o.status === 'fulfilled').map((o) => o.value.txHash);
      expect(sent).toHaveLength(2);
      for (const o of outcomes) if (o.status === 'rejected') expect(String(o.reason)).toMatch(/the hot wallet cannot pay/);
      const stored = await database.prisma.chainSend.findMany({ where: { txHash: { in: sent } } });
      const spent = stored.flatMap((send) => (send.inputs as { txid: string; vout: number }[]).map((i) => `${i.txid}:${i.vout}`));
      expect(new Set(spent).size).toBe(2);
      expect(spent).not.toContain(`${held!.txid}:${held!.vout}`);
      expect(stored.every((send) => send.status === 'sent' && send.fee !== null)).toBe(true);
      const mempool = await ltc.node.node.call<string[]>('getrawmempool');
      for (const txHash of sent) expect(mempool).toContain(txHash);
      await database.prisma.chainSend.update({ where: { id: crashed.id }, data: { status: 'failed' } });
    });

    it('pays each output type exactly its dust limit, which litecoind relays (one satoshi less is refused before signing)', async () => {
      // Another account (another hot address), and after the tests that count this signer's hot wallet's coins: a wallet
      // created for a database holding sends rescans for the hot address.
      const adapter = utxoAdapter('litecoin', settings({ wallet: 'adapter-dust', xpub: other.accountXpub('litecoin', true) }), context(other)) as UtxoAdapter;
      await adapter.connect();
      for (let i = 0; i < 4; i++) await ltc.node.pay(adapter.hotAddress, '0.01');
      await ltc.node.mine(1);
      const taproot = p2tr(schnorr.getPublicKey(randomBytes(32)), undefined, SIGNER_NETWORKS.litecoin.regtest).address!;
      const limits: [string, string][] = [
        [await ltc.node.miner.call<string>('getnewaddress', ['', 'legacy']), '0.00005460'],
        [await ltc.node.miner.call<string>('getnewaddress', ['', 'p2sh-segwit']), '0.00005400'],
        [await ltc.node.miner.call<string>('getnewaddress', ['', 'bech32']), '0.00002940'],
        [taproot, '0.00003300'],
      ];
      const transfer = (to: string, amount: string) => ({ id: randomUUID(), purpose: 'refund' as const, asset: 'ltc' as const, to, tag: null, amount: toMoney(amount) });
      for (const [to, limit] of limits) {
        await expect(adapter.send(transfer(to, coinText(toSats(limit) - 1n)))).rejects.toThrow(/dust/);
        const { txHash } = await adapter.send(transfer(to, limit));
        const entry = await ltc.node.node.call<{ vsize: number }>('getmempoolentry', [txHash]);
        expect(entry.vsize, to).toBeGreaterThan(0);
      }
    });

    it('takes CashAddr P2PKH addresses on bitcoin-cash but refuses to send there (its signatures need SIGHASH_FORKID), before asking any node', async () => {
      const closed = new URL(ltc.node.rpcUrl);
      closed.port = String(await freePort());
      const adapter = utxoAdapter('bitcoin-cash', settings({ rpcUrl: closed.toString(), xpub: testXpub('bitcoin-cash', true) }), context());
      const address = deriveAddress(parseExtendedPublicKey(testXpub('bitcoin-cash', true)), 'bitcoin-cash', 0, { regtest: true });
      expect(address).toMatch(/^bchreg:q/);
      expect(adapter.isValidAddress(address)).toBe(true);
      expect(adapter.isValidAddress(ltc.node.minerAddress)).toBe(false);
      expect(chainDescriptor('bitcoin-cash', account, true, 0)).toMatch(/^pkh\(tpub/);
      await expect(
        adapter.send({ id: randomUUID(), purpose: 'refund', asset: 'bch', to: address, tag: null, amount: toMoney('0.1') }),
      ).rejects.toThrow(/sending on bitcoin-cash is not supported yet/);
    });
  });
});
