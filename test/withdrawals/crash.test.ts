// Crash recovery of withdrawals: the real server as a child process, killed with SIGKILL and restarted on the same
// database. Withdrawals are sent with their uid as the transfer id, the intent recorded before the broadcast, so
// after any crash each one has exactly one transaction on the (simulated) chain and every webhook goes out once.
import { beforeAll, describe, expect, it } from 'vitest';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { crashHarness } from '../support/crash-harness.ts';
import { DATABASES } from '../support/databases.ts';
import { sleep } from '../support/processes.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ITEMS = 100;

describe.each(DATABASES)('withdrawals across kill -9 on %s', { timeout: 300_000 }, (kind) => {
  // A short lease: a send interrupted by the kill is taken over soon after the restart.
  // Webhook claims cut short by the kill come back soon too.
  const h = crashHarness(kind, {
    merchant: 'Crash Payouts',
    webhooks: true,
    env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: '2000', WITHDRAWAL_SEND_LEASE_MS: '500', WITHDRAWAL_SEND_INTERVAL_MS: '200' },
  });
  const { start, kill9, withDb } = h;
  const api = (method: string, p: string, json?: unknown) => h.api(method, p, json);

  async function fund(amount: string) {
    const created = await api('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] });
    const filled = await api('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' });
    const total = new Money(amount).plus(filled.body.paymentDetails.invoiceFee).toFixed();
    const paid = await api('POST', '/api/sandbox/transfers', { invoiceId: created.body.id, amount: total, confirmations: 19 });
    expect(paid.status, paid.text).toBe(201);
  }
  const withdrawBatch = async (n: number) => {
    const res = await api('POST', '/api/transactions/withdraw', { items: Array.from({ length: n }, () => ({ amount: '5', tag: '', to: TRON, asset: 'trc20usdt' })) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.every((r: { success: boolean }) => r.success)).toBe(true);
    return res.body.map((r: { uid: string }) => r.uid) as string[];
  };

  beforeAll(() => fund('2000'));

  it('a kill between the hold and the broadcast, and one during the broadcasts: none sent twice, none lost, every webhook once', async () => {
    // Held but never handed to the chain: the node refuses every send until the kill.
    await kill9();
    await start({ SANDBOX_SEND_FAILURES: '1000000' });
    const heldOnly = await withdrawBatch(ITEMS);
    await sleep(300);
    await kill9();

    // Broadcasting: killed while the sender works through the first batch and a second one.
    await start();
    const during = await withdrawBatch(ITEMS);
    // Soon after: the sender is still working through the 200 (a batch of 50 takes tens of ms at least).
    await sleep(Math.floor(Math.random() * 40));
    await kill9();

    // The two crash windows of one send, made exact: intent recorded and nothing broadcast; broadcast by the
    // chain but not yet recorded here.
    const [notBroadcast, notRecorded] = await withDb(async (db) => {
      const queued = await db.withdrawal.findMany({ where: { stage: 'queued' }, take: 2, orderBy: { createdAt: 'asc' } });
      expect(queued.length, 'some withdrawals are still waiting for the chain at the kill').toBe(2);
      const [a, b] = queued;
      await db.withdrawal.update({ where: { uid: a!.uid }, data: { stage: 'sending', sendAttempts: 1 } });
      await db.withdrawal.update({ where: { uid: b!.uid }, data: { stage: 'sending', sendAttempts: 1 } });
      await db.sandboxBroadcast.create({ data: { transferId: b!.uid, network: 'tron', txHash: 'c'.repeat(64), asset: 'trc20usdt', toAddress: TRON, amount: 5 } });
      return [a!.uid, b!.uid];
    });

    const restarted = Date.now();
    await start();
    const all = [...heldOnly, ...during];
    const deadline = Date.now() + 60_000;
    for (;;) {
      const list = await Promise.all(all.map((uid) => api('GET', `/api/transactions/withdrawals/${uid}`)));
      if (list.every((r) => r.body.txHash)) break;
      if (Date.now() > deadline) throw new Error(`not all sent: ${list.filter((r) => !r.body.txHash).length} left`);
      await sleep(200);
    }
    const allSent = Date.now();
    // Every event delivered once: 2 processing webhooks per withdrawal.
    const withdrawalIds = (r: typeof h.receiver.received) => new Set(r.filter((x) => x.json['type'] === 'withdrawal').map((x) => x.headers['webhook-id']));
    await h.receiver.waitFor((r) => withdrawalIds(r).size >= all.length * 2, 60_000);
    console.info(`[withdrawal crash ${kind}] all sent ${allSent - restarted} ms after the restart began; webhooks drained ${Date.now() - allSent} ms later`);
    await kill9();

    await withDb(async (db) => {
      const ws = await db.withdrawal.findMany({ where: { uid: { in: all } } });
      const broadcasts = await db.sandboxBroadcast.findMany({ where: { transferId: { in: all } } });
      expect(ws).toHaveLength(all.length);
      expect(broadcasts).toHaveLength(all.length);
      const byId = new Map(broadcasts.map((b) => [b.transferId, b]));
      for (const w of ws) {
        expect(w.stage).toBe('sent');
        expect(byId.get(w.uid)?.txHash, w.uid).toBe(w.txHash);
      }
      expect(byId.get(notRecorded)!.txHash).toBe('c'.repeat(64));
      expect(byId.get(notBroadcast)!.calls).toBe(1);
      // The send after the restart repeated the call for the one the chain already had, not the transaction.
      expect(byId.get(notRecorded)!.calls).toBe(2);
      const events = await db.event.groupBy({ by: ['subjectId', 'type'], where: { subjectId: { in: all } }, _count: true });
      for (const e of events) expect(e._count, `${e.subjectId} ${e.type}`).toBe(2);
      expect(events).toHaveLength(all.length);
      expect((await verifyLedger(db)).problems).toEqual([]);
    });
    const receipts = h.receiver.received.filter((r) => r.json['type'] === 'withdrawal');
    const perWithdrawal = new Map<string, string[]>();
    for (const r of receipts) perWithdrawal.set(String(r.json['uid']), [...(perWithdrawal.get(String(r.json['uid'])) ?? []), String(r.json['txHash'])]);
    for (const uid of all) {
      const hashes = [...new Set(perWithdrawal.get(uid))];
      expect(hashes, uid).toHaveLength(2);
      expect(hashes).toContain('');
      expect(hashes.find((hash) => hash !== '')).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(receipts.every((r) => r.specSignatureValid && r.standardSignatureValid)).toBe(true);
  });
});
