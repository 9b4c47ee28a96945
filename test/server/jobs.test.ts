// The background jobs on their own: queued refunds are retried until the chain takes them, and finished webhook
// deliveries past retention are pruned (pending and recent ones stay).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

describe.each(DATABASES)('background jobs on %s', (kind) => {
  const server = useServer(kind, {
    SANDBOX_SEND_FAILURES: '2',
    REFUND_RETRY_INTERVAL_MS: '100',
    WEBHOOK_PRUNE_INTERVAL_MS: '100',
    WEBHOOK_RETENTION_DAYS: '1',
  });

  it('a refund the chain refused stays queued, is retried by the refund sender, and is sent once', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
    const id = created.body.id as string;
    await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: '50', confirmations: 19 } });
    const refunded = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token, json: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } });
    expect(refunded.status).toBe(200);
    expect(refunded.body.status).toBe('refunded');
    // The first send failed (SANDBOX_SEND_FAILURES): booked and queued, not lost.
    expect(refunded.body.refund).toMatchObject({ status: 'queued', txHash: null, amount: '49' });
    await expect
      .poll(async () => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body.refund.status, { timeout: 5_000, interval: 50 })
      .toBe('sent');
    const refund = (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body.refund;
    expect(refund.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await server.app.db.prisma.refund.count({ where: { invoiceId: id } })).toBe(1);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('prunes finished deliveries older than the retention period, and only those', async () => {
    const m = await server.merchant();
    const db = server.app.db.prisma;
    const event = await db.event.create({ data: { id: randomUUID(), companyId: m.companyId, type: 'invoice.created', subjectType: 'invoice', payload: {} } });
    const old = new Date(Date.now() - 2 * 86_400_000);
    const delivery = (status: string, updatedAt: Date) => ({
      id: randomUUID(), eventId: event.id, companyId: m.companyId, url: 'https://merchant.example/h', seq: event.seq, status,
      // Pending ones are due far in the future, so the worker leaves them alone.
      nextAttemptAt: new Date(Date.now() + 86_400_000), updatedAt,
    });
    const rows = [delivery('delivered', old), delivery('failed', old), delivery('pending', old), delivery('delivered', new Date())];
    await db.webhookDelivery.createMany({ data: rows });
    const left = () => db.webhookDelivery.findMany({ where: { id: { in: rows.map((r) => r.id) } }, select: { id: true } });
    await expect.poll(async () => (await left()).length, { timeout: 5_000, interval: 50 }).toBe(2);
    expect((await left()).map((r) => r.id).sort()).toEqual([rows[2]!.id, rows[3]!.id].sort());
  });
});
