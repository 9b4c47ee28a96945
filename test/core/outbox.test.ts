// The core every capability plugs into: events of any kind reach webhooks (or only the feed), idempotency keys
// expire, jobs run on demand.
import { Decimal } from 'decimal.js';
import { afterAll, describe, expect, it } from 'vitest';
import { commitWithEvents, recordEvent } from '../../src/core/events.ts';
import { fingerprint } from '../../src/core/idempotency.ts';
import { DATABASES } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { sampleInvoice, useServer } from '../support/server.ts';

const until = async (check: () => boolean | Promise<boolean>, ms = 8000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('idempotency fingerprint', () => {
  it('is the same for one decimal however it is written, and differs for another', () => {
    expect(fingerprint({ a: new Decimal('1e-7'), b: [new Decimal('10.50')] })).toBe(fingerprint({ a: new Decimal('0.0000001'), b: [new Decimal('10.5')] }));
    expect(fingerprint({ a: new Decimal('1e-7') })).not.toBe(fingerprint({ a: new Decimal('1e-8') }));
  });
});

describe.each(DATABASES)('core on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  const receivers: Receiver[] = [];
  afterAll(async () => {
    for (const r of receivers) await r.close();
  });

  it('pushes an event of a new kind (any subject) as a signed webhook with its payload as written, and keeps feed-only events out', async () => {
    const m = await server.merchant();
    // The payload of a made-up kind: the outbox's own test, not a webhook the features publish.
    const r = await startReceiver(() => m.secretKey, { unpublished: true });
    receivers.push(r);
    await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: r.url } });
    const services = server.app.services;
    const payload = { uid: 'w-1', status: 'processing', message: 'Withdrawal is being processed', amount: '1.50' };
    await commitWithEvents(services.invoices, async (tx) => {
      await recordEvent(tx, { type: 'withdrawal.processing', companyId: m.companyId, subject: { type: 'withdrawal', id: 'w-1' }, payload });
      await recordEvent(tx, { type: 'withdrawal.note', companyId: m.companyId, subject: { type: 'withdrawal', id: 'w-1' }, payload: { uid: 'w-1' }, deliver: false });
    });
    await until(() => r.received.length >= 1);
    expect(r.received[0]!.body).toBe(JSON.stringify(payload));
    expect([r.received[0]!.specSignatureValid, r.received[0]!.standardSignatureValid]).toEqual([true, true]);
    const feed = await server.request('GET', '/api/company/events', { token: m.publicToken });
    expect(feed.body.events.map((e: { type: string }) => e.type)).toEqual(['withdrawal.processing', 'withdrawal.note']);
    const deliveries = await server.request('GET', '/api/company/webhooks/deliveries', { token: m.publicToken });
    expect(deliveries.body.deliveries.map((d: { eventType: string }) => d.eventType)).toEqual(['withdrawal.processing']);
  });

  it('answers a repeated Idempotency-Key until it expires, then takes it as new; the pruner deletes only expired keys', async () => {
    const m = await server.merchant();
    const db = server.app.db.prisma;
    const create = (key: string) =>
      server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice(), headers: { 'idempotency-key': key } });
    const first = await create('key-a');
    const again = await create('key-a');
    expect([first.status, again.status, again.body.id]).toEqual([201, 200, first.body.id]);
    const stored = await db.idempotencyKey.findUniqueOrThrow({ where: { companyId_key: { companyId: m.companyId, key: 'key-a' } } });
    // At least 24 hours (IDEMPOTENCY_KEY_TTL_HOURS).
    expect(stored.expiresAt.getTime() - stored.createdAt.getTime()).toBeGreaterThanOrEqual(24 * 3_600_000 - 1000);

    await create('key-b');
    await db.idempotencyKey.update({ where: { companyId_key: { companyId: m.companyId, key: 'key-a' } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const afterExpiry = await create('key-a');
    expect(afterExpiry.status).toBe(201);
    expect(afterExpiry.body.id).not.toBe(first.body.id);

    await db.idempotencyKey.update({ where: { companyId_key: { companyId: m.companyId, key: 'key-a' } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await server.app.jobs.get('idempotency-pruner').runOnce();
    const left = await db.idempotencyKey.findMany({ where: { companyId: m.companyId }, select: { key: true } });
    expect(left.map((k) => k.key)).toEqual(['key-b']);
  });

  it('runs a job on demand: the expiry sweeper closes an invoice whose window passed', async () => {
    const m = await server.merchant();
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
    await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'btc' } });
    await server.app.db.prisma.invoice.update({ where: { id: created.body.id }, data: { expiredAt: new Date(Date.now() - 1000) } });
    await server.app.jobs.get('expiry-sweeper').runOnce();
    const read = await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`);
    expect(read.body.status).toBe('closed');
  });
});
