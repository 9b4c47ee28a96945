// Crash recovery: the real server (src/bin/server.ts) as a child process, killed with SIGKILL (no shutdown hook, the
// database is not closed) and restarted on the same database. Payment work is one transaction per report, so
// after a restart every invoice settles exactly once: one transfer row, one credit, one fee, one final event.
// Runs on PostgreSQL (DATABASE_URL) and on embedded PGlite (DATA_DIR), which recovers from SIGKILL by WAL replay.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { crashHarness, type Prisma } from '../support/crash-harness.ts';
import { DATABASES } from '../support/databases.ts';
import { runCli } from '../support/processes.ts';

const INVOICE = { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] };
const FILL = { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' };
const DETAILS = { rate: '1', invoiceFee: '1', amount: '101' };

const txHash = () => randomBytes(32).toString('hex');

describe.each(DATABASES)('kill -9 and restart on %s', { timeout: 300_000 }, (kind) => {
  const h = crashHarness(kind, { merchant: 'Crash Test', env: { SWEEP_INTERVAL_MS: '200' } });
  const { withDb, kill9 } = h;
  const start = () => h.start();
  const api = (method: string, p: string, json?: unknown, withToken = true) => h.api(method, p, json, withToken ? 'test' : null);
  const getInvoice = async (id: string) => {
    const res = await api('GET', `/api/invoices/v1/regular/${id}`, undefined, false);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const filledInvoice = async () => {
    const created = await api('POST', '/api/invoices/v1/regular', INVOICE);
    expect(created.status, created.text).toBe(201);
    const proceeded = await api('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, FILL, false);
    expect(proceeded.status, proceeded.text).toBe(200);
    expect(proceeded.body.status).toBe('pending');
    expect(proceeded.body.paymentDetails).toMatchObject({ ...DETAILS, paidAmount: '0' });
    return created.body.id as string;
  };
  const report = (invoiceId: string, hash: string, confirmations = 0) =>
    api('POST', '/api/sandbox/transfers', { invoiceId, amount: '101', confirmations, txHash: hash });
  const ledgerVerify = () => runCli('src/bin/ledger-verify.ts', [], h.env);
  const eventsOf = async (prisma: Prisma, invoiceId: string) =>
    (await prisma.event.findMany({ where: { subjectId: invoiceId, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } })).map((e) => e.type);
  /** A paid invoice, settled exactly once: one confirmed transfer, its one credit of 101, one fee journal, nothing else. */
  async function settledOnce(prisma: Prisma, id: string) {
    expect(await eventsOf(prisma, id), id).toEqual(['invoice.created', 'invoice.pending', 'invoice.processing', 'invoice.done']);
    const transfers = await prisma.chainTransfer.findMany({ where: { invoiceId: id } });
    expect(transfers, id).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ state: 'confirmed', role: 'payment' });
    const entries = await prisma.ledgerEntry.findMany({ where: { invoiceId: id } });
    const credits = entries.filter((e) => e.kind === 'payment' && e.account === 'merchant_available');
    expect(credits, id).toHaveLength(1);
    expect(credits[0]!.amount.toFixed()).toBe('101');
    expect(credits[0]!.transferId).toBe(transfers[0]!.id);
    const fees = entries.filter((e) => e.kind === 'fee');
    expect(new Set(fees.map((e) => e.journalId)).size, id).toBe(1);
    expect(fees.map((e) => [e.account, e.amount.toFixed()]).sort()).toEqual([
      ['merchant_available', '-1'],
      ['platform_fees', '1'],
    ]);
    // A payment journal (2 entries) and a fee journal (2 entries).
    expect(entries).toHaveLength(4);
  }

  beforeAll(() => expect(h.merchant.publicToken).toMatch(/^pk_/));

  it('a transfer seen before the crash is confirmed once after it; a pending invoice closes once', async () => {
    const paidId = await filledInvoice();
    const hash = txHash();
    const seen = await report(paidId, hash);
    expect(seen.status, seen.text).toBe(201);
    expect(seen.body).toMatchObject({ invoiceId: paidId, txHash: hash, amount: '101', confirmations: 0, requiredConfirmations: 19, state: 'seen' });
    const paid = { id: paidId, txHash: hash, transferId: seen.body.id as string };
    expect((await getInvoice(paidId)).status).toBe('processing');
    const expiring = await filledInvoice();

    await kill9();
    await start();

    // Everything acknowledged before the kill is there.
    const before = await getInvoice(paidId);
    expect(before.status).toBe('processing');
    expect(before.invoiceTransactions).toEqual([
      expect.objectContaining({ id: paid.transferId, txHash: hash, amount: '101', status: 'seen', confirmations: 0, kind: 'payment' }),
    ]);
    expect((await getInvoice(expiring)).status).toBe('pending');

    const confirmed = await api('POST', `/api/sandbox/transfers/${paid.transferId}/confirm`, {});
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toMatchObject({ id: paid.transferId, state: 'confirmed', confirmations: 19 });
    const done = await getInvoice(paidId);
    expect(done.status).toBe('done');
    expect(done.paymentDetails).toEqual({ ...DETAILS, paidAmount: '101', overpaidAmount: '0', rateSources: expect.any(Object) });

    // Replays: the confirmation again, the original report (0 and 19 confirmations), all answer the one transfer.
    const again = await api('POST', `/api/sandbox/transfers/${paid.transferId}/confirm`, {});
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ id: paid.transferId, state: 'confirmed' });
    for (const confirmations of [0, 19]) {
      const replay = await report(paidId, hash, confirmations);
      expect(replay.status, replay.text).toBe(201);
      expect(replay.body).toMatchObject({ id: paid.transferId, txHash: hash, amount: '101', state: 'confirmed' });
    }
    const after = await getInvoice(paidId);
    expect(after.status).toBe('done');
    expect(after.paymentDetails).toEqual({ ...DETAILS, paidAmount: '101', overpaidAmount: '0', rateSources: expect.any(Object) });
    expect(after.invoiceTransactions).toHaveLength(1);

    // The invoice left pending closes when the clock passes its window, and stays closed. (The background
    // sweeper runs every 200 ms here and races the advance's own sweep; either may close it.)
    const advanced = await api('POST', '/api/sandbox/clock/advance', { minutes: 31 });
    expect(advanced.status, advanced.text).toBe(200);
    expect(advanced.body.offsetMinutes).toBe(31);
    expect(advanced.body.expired).toBeLessThanOrEqual(1);
    expect((await getInvoice(expiring)).status).toBe('closed');
    const twice = await api('POST', '/api/sandbox/clock/advance', { minutes: 31 });
    expect(twice.status, twice.text).toBe(200);
    expect(twice.body).toMatchObject({ offsetMinutes: 62, expired: 0 });
    expect((await getInvoice(expiring)).status).toBe('closed');
    expect((await getInvoice(paidId)).status).toBe('done');

    // The clock survives a crash too.
    await kill9();
    await start();
    const clock = await api('GET', '/api/sandbox/clock');
    expect(clock.body.offsetMinutes).toBe(62);
    expect((await getInvoice(expiring)).status).toBe('closed');

    // Every record of the two exists exactly once (read with the server down: PGlite admits one process).
    await kill9();
    await withDb(async (prisma) => {
      await settledOnce(prisma, paid.id);
      expect(await prisma.chainTransfer.count({ where: { txHash: paid.txHash } })).toBe(1);
      expect(await eventsOf(prisma, expiring)).toEqual(['invoice.created', 'invoice.pending', 'invoice.closed']);
      expect(await prisma.ledgerEntry.count({ where: { invoiceId: expiring } })).toBe(0);
    });
    await start();
  });

  it('kill -9 while confirmations are in flight: retrying them after the restart settles each invoice once', async () => {
    const ids: string[] = [];
    const transfers: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = await filledInvoice();
      const seen = await report(id, txHash());
      expect(seen.status, seen.text).toBe(201);
      ids.push(id);
      transfers.push(seen.body.id);
    }

    // All confirmations at once; the server dies as soon as the first one has been answered.
    const inFlight = transfers.map((t) =>
      api('POST', `/api/sandbox/transfers/${t}/confirm`, {}).then(
        (res) => res.status,
        () => 'lost' as const,
      ),
    );
    await Promise.race(inFlight);
    await kill9();
    const outcomes = await Promise.all(inFlight);
    for (const o of outcomes) expect([200, 'lost']).toContain(o);
    expect(outcomes).toContain(200);

    await start();
    // An answered confirmation survived the crash; the others either committed entirely or not at all.
    const committed: string[] = [];
    for (const [i, id] of ids.entries()) {
      const invoice = await getInvoice(id);
      committed.push(invoice.status);
      if (outcomes[i] === 200) expect(invoice.status, id).toBe('done');
      else expect(['processing', 'done'], id).toContain(invoice.status);
      const tx = invoice.invoiceTransactions[0];
      expect(tx.status).toBe(invoice.status === 'done' ? 'confirmed' : 'seen');
    }
    const answered = outcomes.filter((o) => o === 200).length;
    const unanswered = committed.filter((status, i) => status === 'done' && outcomes[i] !== 200).length;
    console.info(`[crash ${kind}] at the kill: ${answered} confirmations answered, ${unanswered} committed unanswered, ${ids.length - answered - unanswered} rolled back or never started`);
    // Retry everything.
    for (const t of transfers) {
      const res = await api('POST', `/api/sandbox/transfers/${t}/confirm`, {});
      expect(res.status, res.text).toBe(200);
      expect(res.body.state).toBe('confirmed');
    }
    for (const id of ids) {
      const invoice = await getInvoice(id);
      expect(invoice.status, id).toBe('done');
      expect(invoice.paymentDetails).toEqual({ ...DETAILS, paidAmount: '101', overpaidAmount: '0', rateSources: expect.any(Object) });
    }
    // In the database: each settled exactly once, whatever the kill cut short.
    await kill9();
    await withDb(async (prisma) => {
      for (const id of ids) await settledOnce(prisma, id);
    });
    await start();
  });

  it('ledger:verify holds through the admin API, and after kill -9 on the database opened directly', async () => {
    // Its own journals to verify: a payment and its fee.
    const id = await filledInvoice();
    const seen = await report(id, txHash());
    expect(seen.status, seen.text).toBe(201);
    expect((await api('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, {})).body.state).toBe('confirmed');
    expect((await getInvoice(id)).status).toBe('done');
    const balances = await api('GET', '/api/company/balances');
    const available = balances.body.balances.find((b: { asset: string }) => b.asset === 'trc20usdt').available as string;

    const live = await ledgerVerify();
    expect(live.code, live.stderr).toBe(0);
    expect(live.json).toMatchObject({ ok: true, problems: [] });

    // A stale admin state file (dead pid) is ignored: the CLI opens the database itself.
    await kill9();
    const direct = await ledgerVerify();
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.json).toEqual(live.json);

    await withDb(async (prisma) => {
      // It verified every journal there is (two entries each), this test's among them.
      const journals = await prisma.ledgerEntry.groupBy({ by: ['journalId'] });
      expect(direct.json).toMatchObject({ ok: true, journals: journals.length, entries: 2 * journals.length, problems: [] });
      await settledOnce(prisma, id);
      // The balance is the sum of its shards, as the API answered it.
      const shards = await prisma.balance.aggregate({
        where: { companyId: h.merchant.companyId, asset: 'trc20usdt', account: 'merchant_available' },
        _sum: { amount: true },
      });
      expect(shards._sum.amount?.toFixed()).toBe(available);
    });
    await start();
  });
});
