// A deposit seen before a kill -9 and confirmed after the restart is credited once, with one `done` webhook.
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { crashHarness } from '../support/crash-harness.ts';
import { DATABASES } from '../support/databases.ts';

describe.each(DATABASES)('deposits across kill -9 on %s', { timeout: 120_000 }, (kind) => {
  const h = crashHarness(kind, {
    merchant: 'Crash Deposits',
    webhooks: true,
    env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: '2000' },
  });
  const api = (method: string, p: string, json?: unknown) => h.api(method, p, json);

  it('seen, kill -9, restart, confirmed twice: one credit and one done webhook', async () => {
    const address = (await api('POST', '/api/static-addresses', { asset: 'ltc', internalUserId: 'crash-user' })).body;
    const seen = await api('POST', '/api/sandbox/transfers', { address: address.address, amount: '2' });
    expect(seen.status, seen.text).toBe(201);
    await h.kill9();
    await h.start();
    // The same report again after the restart, then the confirmation twice.
    expect((await api('POST', '/api/sandbox/transfers', { address: address.address, amount: '2', txHash: seen.body.txHash })).body.id).toBe(seen.body.id);
    for (let i = 0; i < 2; i++) expect((await api('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, {})).body.state).toBe('confirmed');
    const ofDeposit = () => h.receiver.received.filter((r) => r.json['hash'] === seen.body.txHash);
    await h.receiver.waitFor(() => ofDeposit().some((r) => r.json['status'] === 'done'), 30_000);
    await h.kill9();
    await h.withDb(async (db) => {
      const credits = await db.ledgerEntry.count({ where: { transferId: seen.body.id, kind: 'deposit', account: 'merchant_available' } });
      expect(credits).toBe(1);
      const events = await db.event.findMany({ where: { subjectId: seen.body.id }, orderBy: { seq: 'asc' } });
      expect(events.map((e) => e.type)).toEqual(['deposit.processing', 'deposit.done']);
      expect((await verifyLedger(db)).problems).toEqual([]);
    });
    expect(new Set(ofDeposit().filter((r) => r.json['status'] === 'done').map((r) => r.headers['webhook-id'])).size).toBe(1);
  });
});
