// The EVM adapter end to end: the real server on a real anvil node (docs/chains-evm.md) with an ERC-20 deployed by the
// test. Payments in eth and usdterc20 seen, confirmed, underpaid, reorganised away; consolidation (native sweeps, a
// token sweep after its gas top-up) fills the hot wallet, and a withdrawal paid from it sends its three webhooks to a
// real receiver; a restart with a lost cursor; the custody check of ledger:verify, the CLI included.
import { getAddress, parseEther, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { custodyProblems } from '../../src/chains/custody.ts';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { openDatabase } from '../../src/db/client.ts';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { startAnvil, testToken, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES, type DbKind } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { runCli, sleep, stopAllChildren, tempDir } from '../support/processes.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';

const CONFIRMATIONS = 3;
/** Scans run every 100 ms; a loaded machine may still take seconds for one. */
const CHAIN_WAIT_MS = 30_000;
const { abi } = testToken();
const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;

/** One anvil and its token for the enclosing describe block. */
function useAnvil(): { readonly node: Anvil; readonly token: Address } {
  let node: Anvil | undefined;
  let token: Address | undefined;
  beforeAll(async () => {
    node = await startAnvil();
    token = await node.deployToken(6);
  });
  afterAll(async () => node?.stop());
  return {
    get node() {
      return node!;
    },
    get token() {
      return token!;
    },
  };
}

/** A server whose ethereum runs on the anvil; the other networks stay on the sandbox. */
function ethereumServer(kind: DbKind, chain: { readonly node: Anvil; readonly token: Address }, options: { signer?: boolean; config?: Record<string, unknown> } = {}) {
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WITHDRAWAL_SEND_INTERVAL_MS: '200', REFUND_RETRY_INTERVAL_MS: '200' };
  beforeAll(() => {
    const chains = chainsEnv({
      ethereum: {
        rpcUrl: chain.node.rpcUrl,
        chainId: chain.node.chainId,
        xpub: testXpub('ethereum', false),
        tokens: { usdterc20: chain.token },
        confirmations: CONFIRMATIONS,
        pollMs: 100,
        sweepIntervalMs: 0,
        sweepTokenMinimum: '1',
        ...options.config,
      },
    });
    if (options.signer === false) delete chains['SIGNER_MNEMONIC'];
    Object.assign(env, chains);
  });
  return Object.assign(useServer(kind, env, { logLevel: 'info' }), { env });
}

function helpers(server: TestServer, chain: { readonly node: Anvil; readonly token: Address }) {
  const read = async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
  const db = () => server.app.db.prisma;
  return {
    read,
    until: (id: string, check: (invoice: any) => boolean) => eventually(() => read(id), check, CHAIN_WAIT_MS),
    /** An invoice of `price` in eth or usdt, paid in eth or usdterc20: its address and the amount due. */
    async invoice(token: string, paymentCurrency: 'eth' | 'usdterc20', price = '1') {
      const invoiceCurrency = paymentCurrency === 'eth' ? 'eth' : 'usdt';
      const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency, items: [{ name: 'Order', price }] } });
      expect(created.status, created.text).toBe(201);
      const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });
      expect(filled.status, filled.text).toBe(200);
      return { id: created.body.id as string, address: filled.body.address.address as Address, amount: filled.body.paymentDetails.amount as string };
    },
    /** Pays `amount` (units of the currency) of eth or the token from payer `from`. */
    pay(paymentCurrency: 'eth' | 'usdterc20', to: Address, amount: string, from = 0): Promise<Hex> {
      if (paymentCurrency === 'eth') return chain.node.pay(to, amount, from);
      const [whole, fraction = ''] = amount.split('.');
      return chain.node.call(chain.token, abi, 'transfer', [to, BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'))], from);
    },
    async merchant(receiver?: Receiver) {
      const m = await server.liveMerchant();
      if (receiver) {
        const res = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receiver.url } });
        expect(res.status).toBe(200);
      }
      return m;
    },
    balance: async (token: string, asset: string) =>
      ((await server.request('GET', '/api/company/balances', { token })).body.balances as { asset: string }[]).find((b) => b.asset === asset) ?? { available: '0', pending: '0' },
    custody: () => custodyProblems(db(), server.app.platform.chains.custodySources()),
    /** Mines a block at a time until `check` holds. */
    mineUntil: <T>(read: () => Promise<T>, check: (value: T) => boolean) =>
      eventually(
        async () => {
          const value = await read();
          if (!check(value)) {
            await chain.node.mine(1);
            await sleep(100);
          }
          return value;
        },
        check,
        CHAIN_WAIT_MS,
      ),
    openSends: () => db().chainSend.count({ where: { network: 'ethereum', status: { in: ['signed', 'sent'] } } }),
  };
}

const invoiceHooks = (receiver: Receiver, id: string) => receiver.received.filter((r) => r.json['invoiceId'] === id || r.json['id'] === id).map((r) => r.json['status']);

describe.runIf(ANVIL)('the EVM adapter on anvil, through the server', () => {
  afterAll(stopAllChildren);

  describe.each(DATABASES)('payments on %s', (kind) => {
    const chain = useAnvil();
    const server = ethereumServer(kind, chain);
    const h = helpers(server, chain);
    let receiver: Receiver;
    let secret = '';
    beforeAll(async () => {
      receiver = await startReceiver(() => secret);
    });
    afterAll(async () => receiver?.close());

    it('an eth invoice is processing once paid, done after 3 confirmations, with its webhooks; a usdterc20 one too', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const invoice = await h.invoice(m.publicToken, 'eth', '1.5');
      const derived = await server.app.db.prisma.derivedAddress.findUniqueOrThrow({ where: { network_address: { network: 'ethereum', address: invoice.address } } });
      expect(invoice.address).toBe(getAddress(invoice.address));
      expect(invoice.address).toBe(testSigner.evmAccount('ethereum', { chain: 0, index: derived.index }).address);

      const txHash = await h.pay('eth', invoice.address, invoice.amount);
      await chain.node.mine(1);
      const seen = await h.until(invoice.id, (b) => b.status === 'processing');
      expect(seen.invoiceTransactions).toEqual([expect.objectContaining({ txHash, amount: invoice.amount, confirmations: 1, status: 'seen' })]);
      expect(await h.balance(m.publicToken, 'eth')).toMatchObject({ available: '0', pending: invoice.amount });
      await chain.node.mine(CONFIRMATIONS - 1);
      const done = await h.until(invoice.id, (b) => b.status === 'done');
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ txHash, confirmations: CONFIRMATIONS, status: 'confirmed' })]);
      expect(await h.balance(m.publicToken, 'eth')).toMatchObject({ available: '1.5', pending: '0' });
      await receiver.waitFor(() => invoiceHooks(receiver, invoice.id).includes('done'), CHAIN_WAIT_MS);
      expect(invoiceHooks(receiver, invoice.id)).toEqual(['created', 'pending', 'processing', 'done']);

      const usdt = await h.invoice(m.publicToken, 'usdterc20', '25');
      await h.pay('usdterc20', usdt.address, usdt.amount, 1);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(usdt.id, (b) => b.status === 'done');
      expect(await h.balance(m.publicToken, 'usdterc20')).toMatchObject({ available: '25' });
    });

    it("static addresses: a deposit counts at the configured 3 confirmations (not eth's 12); dust and a foreign asset sent to them are refused while the scan goes on", async () => {
      const m = await h.merchant();
      const staticAddress = async (asset: string, internalUserId: string) => {
        const res = await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset, internalUserId } });
        expect(res.status, res.text).toBe(201);
        return res.body as { id: string; address: Address };
      };
      const eth = await staticAddress('eth', 'alice');
      const usdt = await staticAddress('usdterc20', 'bob');
      // Refused for good: 1e-8 eth is below the deposit dust, and ether is not what a usdterc20 address takes.
      await h.pay('eth', eth.address, '0.00000001', 0);
      await h.pay('eth', usdt.address, '0.5', 1);
      await chain.node.mine(1);
      const txHash = await h.pay('eth', eth.address, '0.25', 2);
      const invoice = await h.invoice(m.publicToken, 'eth', '1');
      await h.pay('eth', invoice.address, invoice.amount, 3);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');
      const deposits = await eventually(
        async () => (await server.request('GET', '/api/deposits', { token: m.publicToken })).body.deposits as { hash: string; status: string; confirmations: number }[],
        (list) => list.some((d) => d.status === 'done'),
        CHAIN_WAIT_MS,
      );
      expect(deposits).toEqual([expect.objectContaining({ hash: txHash, amount: '0.25', status: 'done', confirmations: CONFIRMATIONS })]);
      const health = await (await fetch(`${server.url}/health`)).json();
      expect(health.chains.find((c: { network: string }) => c.network === 'ethereum')).toMatchObject({ live: 'node', test: 'sandbox', state: 'ok' });
      expect(server.logs.filter((l) => l['msg'] === 'a chain report was refused; passed over')).toHaveLength(2);
    });

    it('an underpaid invoice is wrong once the payment is final', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, 'usdterc20', '10');
      await h.pay('usdterc20', invoice.address, '9.999999', 2);
      await chain.node.mine(CONFIRMATIONS);
      const wrong = await h.until(invoice.id, (b) => b.status === 'wrong');
      expect(wrong.paymentDetails.paidAmount).toBe('9.999999');
    });

    it('a refund whose send fails on chain (its nonce taken) goes out again under a new id and is confirmed: the client is paid once', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, 'eth', '1');
      await h.pay('eth', invoice.address, '0.5', 1);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'wrong');
      await chain.node.test.setBalance({ address: hot, value: parseEther('10') });
      const client = chain.node.payers[1]!.address;
      const before = await chain.node.public.getBalance({ address: client });

      const refunded = await server.request('POST', `/api/invoices/v1/regular/${invoice.id}/refund`, { token: m.publicToken, json: { address: client } });
      expect(refunded.status, refunded.text).toBe(200);
      const first = refunded.body.refund as { id: string; amount: string; status: string; txHash: string };
      expect(first).toMatchObject({ status: 'sent', txHash: expect.stringMatching(/^0x/) });
      // The refund leaves the mempool; the hot wallet's key spends its nonce on something else, which is mined.
      const firstSend = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: first.id } });
      await chain.node.test.request({ method: 'anvil_dropTransaction', params: [first.txHash] } as never);
      const taker = await testSigner.evmAccount('ethereum', HOT_WALLET).signTransaction({
        chainId: chain.node.chainId,
        type: 'eip1559',
        nonce: Number(firstSend.nonce),
        to: hot,
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: 500_000_000_000n,
        maxPriorityFeePerGas: 100_000_000_000n,
      });
      await chain.node.public.sendRawTransaction({ serializedTransaction: taker });
      await chain.node.mine(1);

      const read = async () => (await h.read(invoice.id)).refund as { status: string; txHash: string | null };
      const done = await h.mineUntil(read, (r) => r.status === 'confirmed');
      expect(done.txHash).not.toBe(first.txHash);
      const sends = await server.app.db.prisma.chainSend.findMany({ where: { purpose: 'refund', id: { startsWith: first.id } }, orderBy: { createdAt: 'asc' } });
      expect(sends.map((x) => [x.id, x.status])).toEqual([
        [first.id, 'failed'],
        [`${first.id}.1`, 'confirmed'],
      ]);
      expect(await chain.node.public.getBalance({ address: client })).toBe(before + parseEther(first.amount));
      expect(server.logs.some((l) => l['msg'] === 'a refund failed on chain; it is queued again and goes out under a new send id' && l['refundId'] === first.id)).toBe(true);
    });

    it('a payment a reorg removes before it counts, whose nonce the payer then spends elsewhere, is dropped and never credited', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, 'eth', '1');
      const txHash = await h.pay('eth', invoice.address, invoice.amount, 3);
      await chain.node.mine(1);
      await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      // The block holding it is replaced by an empty one; the payer's next transaction takes its nonce.
      await chain.node.test.request({ method: 'anvil_reorg', params: [1, []] } as never);
      await chain.node.pay(chain.node.payers[0]!.address, '0.001', 3);
      await chain.node.mine(CONFIRMATIONS + 1);
      const dropped = await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.status === 'dropped');
      expect(dropped.invoiceTransactions[0].txHash).toBe(txHash);
      expect(dropped.paymentDetails.paidAmount).toBe('0');
      expect(await h.balance(m.publicToken, 'eth')).toMatchObject({ available: '0', pending: '0' });
      expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: invoice.id } })).toBe(0);
    });

    it('a payment a reorg moves to another block before it counts is credited once, from its new block', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, 'eth', '1');
      const payer = chain.node.payers[2]!;
      const raw = await payer.signTransaction({
        chainId: chain.node.chainId,
        type: 'eip1559',
        nonce: await chain.node.public.getTransactionCount({ address: payer.address }),
        to: invoice.address,
        value: parseEther(invoice.amount),
        gas: 21_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      const txHash = await chain.node.public.sendRawTransaction({ serializedTransaction: raw });
      await chain.node.mine(1);
      await h.until(invoice.id, (b) => b.invoiceTransactions?.[0]?.confirmations === 1);
      await chain.node.test.request({ method: 'anvil_reorg', params: [1, [[raw, 0]]] } as never);
      await chain.node.mine(CONFIRMATIONS);
      const done = await h.until(invoice.id, (b) => b.status === 'done');
      const moved = await chain.node.public.getTransactionReceipt({ hash: txHash });
      expect(done.invoiceTransactions).toEqual([expect.objectContaining({ txHash, status: 'confirmed' })]);
      expect(await server.app.db.prisma.chainTransfer.findFirstOrThrow({ where: { txHash } })).toMatchObject({ blockNumber: moved.blockNumber });
      expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: invoice.id, kind: 'payment' } })).toBe(2);
    });

    it('a restart, and a scan repeated from an older cursor (a crash between reporting and saving), lose and duplicate nothing', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const cursor = async () => (await server.app.db.prisma.chainCursor.findUniqueOrThrow({ where: { network: 'ethereum' } })).state;
      const before = await cursor();
      const first = await h.invoice(m.publicToken, 'eth', '1');
      const firstTx = await h.pay('eth', first.address, first.amount);
      await chain.node.mine(1);
      await h.until(first.id, (b) => b.status === 'processing');
      await chain.node.mine(CONFIRMATIONS - 1);
      await h.until(first.id, (b) => b.status === 'done');
      const second = await h.invoice(m.publicToken, 'usdterc20', '2');
      let secondTx = '' as Hex;
      await server.restart(async () => {
        // While the server is down: a payment is mined, and the last saved cursor is lost.
        secondTx = await h.pay('usdterc20', second.address, second.amount);
        await chain.node.mine(1);
        const database = await openDatabase({ url: server.databaseUrl, role: 'test' });
        try {
          await database.prisma.$executeRaw`UPDATE "ChainCursor" SET "state" = ${JSON.stringify(before)}::jsonb WHERE "network" = 'ethereum'`;
        } finally {
          await database.close();
        }
      });
      await h.until(second.id, (b) => b.invoiceTransactions?.[0]?.confirmations >= 1);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(second.id, (b) => b.status === 'done');
      await sleep(1_000); // more scans: nothing more may happen

      const db = server.app.db.prisma;
      for (const [invoice, txHash] of [[first, firstTx], [second, secondTx]] as const) {
        expect(await db.chainTransfer.count({ where: { network: 'ethereum', txHash } })).toBe(1);
        expect(await db.ledgerEntry.count({ where: { invoiceId: invoice.id, kind: 'payment' } })).toBe(2);
        const statuses = (await db.event.findMany({ where: { subjectId: invoice.id, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } })).map((e) => (e.payload as { status: string }).status);
        expect(statuses.filter((s) => s === 'done')).toHaveLength(1);
        await receiver.waitFor(() => invoiceHooks(receiver, invoice.id).includes('done'), CHAIN_WAIT_MS);
        expect(invoiceHooks(receiver, invoice.id)).toEqual(['created', 'pending', 'processing', 'done']);
      }
    });

    it('consolidation moves paid deposits into the hot wallet (a token sweep after its gas top-up); a withdrawal paid from it sends its three webhooks', async () => {
      const m = await h.merchant(receiver);
      secret = m.secretKey;
      const paid = await h.invoice(m.publicToken, 'usdterc20', '40');
      const paidEth = await h.invoice(m.publicToken, 'eth', '1');
      await h.pay('usdterc20', paid.address, paid.amount);
      await h.pay('eth', paidEth.address, paidEth.amount);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(paid.id, (b) => b.status === 'done');
      await h.until(paidEth.id, (b) => b.status === 'done');
      // Everything credited so far leaves its deposit address: top-ups, then token and native sweeps, all final.
      await h.mineUntil(
        async () => ({
          open: await h.openSends(),
          tokensLeft: (await chain.node.public.readContract({ address: chain.token, abi, functionName: 'balanceOf', args: [paid.address] })) as bigint,
        }),
        (s) => s.open === 0 && s.tokensLeft === 0n,
      );
      const sends = await server.app.db.prisma.chainSend.findMany({ where: { network: 'ethereum' }, orderBy: { createdAt: 'asc' } });
      const topup = sends.find((s) => s.purpose === 'topup' && s.toAddress === paid.address)!;
      const tokenSweep = sends.find((s) => s.purpose === 'sweep' && s.fromAddress === paid.address)!;
      expect(topup).toMatchObject({ fromAddress: hot, asset: 'eth', status: 'confirmed' });
      expect(tokenSweep).toMatchObject({ toAddress: hot, asset: 'usdterc20', status: 'confirmed' });
      expect(tokenSweep.amount.toString()).toBe(paid.amount);
      expect(tokenSweep.createdAt.getTime()).toBeGreaterThan(topup.createdAt.getTime());
      // Our own top-up paid the deposit address: no payment of anyone's.
      expect(await server.app.db.prisma.chainTransfer.count({ where: { txHash: topup.txHash } })).toBe(0);
      expect(sends.filter((s) => s.purpose === 'sweep' && s.asset === 'eth').every((s) => s.status === 'confirmed' && s.fee !== null)).toBe(true);
      expect(await chain.node.public.getBalance({ address: hot })).toBeGreaterThan(parseEther('3'));

      const to = chain.node.payers[3]!.address;
      const start = await chain.node.public.getBalance({ address: to });
      const res = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '0.5', tag: '', to, asset: 'eth' }] } });
      expect(res.body[0], res.text).toMatchObject({ success: true });
      const uid = res.body[0].uid as string;
      const withdrawal = () => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }).then((r) => r.body);
      const sent = await eventually(withdrawal, (w) => Boolean(w.txHash), CHAIN_WAIT_MS);
      const done = await h.mineUntil(withdrawal, (w) => w.status === 'done');
      expect(done.txHash).toBe(sent.txHash);
      expect(await chain.node.public.getBalance({ address: to })).toBe(start + parseEther('0.5'));
      const hooks = () => receiver.received.filter((r) => r.json['uid'] === uid);
      await receiver.waitFor(() => hooks().some((r) => r.json['status'] === 'done'), CHAIN_WAIT_MS);
      expect(hooks().map((r) => [r.json['status'], r.json['txHash']])).toEqual([
        ['processing', ''],
        ['processing', sent.txHash],
        ['done', sent.txHash],
      ]);
      const send = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: uid } });
      expect(send).toMatchObject({ purpose: 'withdrawal', status: 'confirmed', txHash: sent.txHash, fromAddress: hot, toAddress: to });
      expect(send.fee!.gt(0)).toBe(true);
    });

    it('ledger:verify finds nothing wrong, the custody check included (every paid address asked of the node)', async () => {
      // Its own money on chain, so neither check runs over nothing: an eth and a usdterc20 invoice paid (both swept into
      // the hot wallet, the token after its gas top-up), a deposit to a static address, and dust there the scan refused.
      const m = await h.merchant();
      await chain.node.test.setBalance({ address: hot, value: parseEther('10') });
      const eth = await h.invoice(m.publicToken, 'eth', '1');
      const usdt = await h.invoice(m.publicToken, 'usdterc20', '20');
      const created = await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'eth', internalUserId: 'carol' } });
      expect(created.status, created.text).toBe(201);
      const deposit = created.body as { id: string; address: Address };
      await h.pay('eth', eth.address, eth.amount, 0);
      await h.pay('usdterc20', usdt.address, usdt.amount, 1);
      await h.pay('eth', deposit.address, '0.25', 2);
      await h.pay('eth', deposit.address, '0.00000001', 3);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(eth.id, (b) => b.status === 'done');
      await h.until(usdt.id, (b) => b.status === 'done');
      await eventually(
        async () => (await server.request('GET', `/api/deposits?addressId=${deposit.id}&status=done`, { token: m.publicToken })).body.deposits as unknown[],
        (list) => list.length === 1,
        CHAIN_WAIT_MS,
      );
      const db = server.app.db.prisma;
      // Consolidated, and final: a sweep from each of the three addresses.
      await h.mineUntil(
        async () => ({ open: await h.openSends(), swept: await db.chainSend.count({ where: { purpose: 'sweep', status: 'confirmed', fromAddress: { in: [eth.address, usdt.address, deposit.address] } } }) }),
        (s) => s.open === 0 && s.swept === 3,
      );
      await chain.node.mine(CONFIRMATIONS);
      await sleep(500);
      const custody = await h.custody();
      expect(custody.problems).toEqual([]);
      expect(custody.addresses).toBeGreaterThanOrEqual(3);
      // The dust refused at the static address is on chain but was never credited: a surplus, reported apart.
      const surplus = custody.surpluses.filter((x) => x.address === deposit.address);
      expect(surplus.map((x) => [x.asset, new Money(x.onChain).minus(x.expected).toFixed()])).toEqual([['eth', '0.00000001']]);
      const report = await verifyLedger(db, server.app.platform.chains.custodySources());
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      const journals = await db.ledgerEntry.groupBy({ by: ['journalId', 'kind'], where: { companyId: m.tenantId } });
      expect(new Set(journals.map((j) => j.kind))).toEqual(new Set(['payment', 'fee', 'deposit', 'deposit_fee']));
      expect(report.journals).toBeGreaterThanOrEqual(journals.length);
      if (kind === 'postgres') {
        const cli = await runCli('src/bin/ledger-verify.ts', [], { DATA_DIR: tempDir(), DATABASE_URL: server.databaseUrl, CHAINS_FILE: server.env['CHAINS_FILE']!, LOG_LEVEL: 'silent' });
        expect(cli.code, cli.stderr).toBe(0);
        expect(cli.json).toMatchObject({ ok: true, problems: [] });
      }
    });
  });

  describe('consolidation one address per pass (sweepMaxAddresses 1)', () => {
    const chain = useAnvil();
    const server = ethereumServer(DATABASES.at(-1)!, chain, { config: { sweepMaxAddresses: 1 } });
    const h = helpers(server, chain);

    it('sweeps every paid address in turn: one already swept (its fee reserve left in the records) never takes the pass again', async () => {
      const m = await h.merchant();
      const invoices = [];
      for (let i = 0; i < 4; i++) invoices.push(await h.invoice(m.publicToken, 'eth', '1'));
      for (const [i, invoice] of invoices.entries()) await h.pay('eth', invoice.address, invoice.amount, i);
      await chain.node.mine(CONFIRMATIONS);
      for (const invoice of invoices) await h.until(invoice.id, (b) => b.status === 'done');
      const sweeps = () => server.app.db.prisma.chainSend.findMany({ where: { network: 'ethereum', purpose: 'sweep' } });
      const all = await h.mineUntil(sweeps, (list) => list.length === invoices.length && list.every((s) => s.status === 'confirmed'));
      expect(new Set(all.map((s) => s.fromAddress))).toEqual(new Set(invoices.map((i) => i.address)));
      // Passes go on at every scan; nothing is left worth a sweep, so nothing more is sent.
      for (let i = 0; i < 5; i++) {
        await chain.node.mine(1);
        await sleep(200);
      }
      expect(await sweeps()).toHaveLength(invoices.length);
      for (const invoice of invoices) expect(await chain.node.public.getBalance({ address: invoice.address })).toBeLessThan(parseEther('0.01'));
    });
  });

  describe('a reorg after a payment counted (a watch-only server: it consolidates nothing)', () => {
    const chain = useAnvil();
    const server = ethereumServer(DATABASES.at(-1)!, chain, { signer: false });
    const h = helpers(server, chain);

    it('keeps the credit, logs an error that says what to do, and ledger:verify names the address', async () => {
      const m = await h.merchant();
      const invoice = await h.invoice(m.publicToken, 'eth', '1');
      const txHash = await h.pay('eth', invoice.address, invoice.amount);
      await chain.node.mine(CONFIRMATIONS);
      await h.until(invoice.id, (b) => b.status === 'done');
      expect((await h.custody()).problems).toEqual([]);

      // Deeper than a payment needs: the blocks from the payment's on are replaced by empty ones.
      await chain.node.test.request({ method: 'anvil_reorg', params: [CONFIRMATIONS, []] } as never);
      await chain.node.mine(1);
      const lost = await eventually(
        async () => server.logs.filter((l) => String(l['msg']).startsWith('a credited transfer was in a block a reorg replaced') && l['txHash'] === txHash),
        (lines) => lines.length > 0,
        CHAIN_WAIT_MS,
      );
      expect(lost[0]).toMatchObject({ level: 50, network: 'ethereum' });
      expect(String(lost[0]!['msg'])).toContain('docs/chains-evm.md');
      expect((await h.read(invoice.id)).status).toBe('done');
      expect(await h.balance(m.publicToken, 'eth')).toMatchObject({ available: '1' });

      await chain.node.mine(CONFIRMATIONS);
      const report = await verifyLedger(server.app.db.prisma, server.app.platform.chains.custodySources());
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([{ check: 'chain-custody', mode: 'live', key: `ethereum/${invoice.address}/eth`, expected: invoice.amount, actual: '0' }]);
    });
  });
});
