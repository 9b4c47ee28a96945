// A deposit seen before a kill -9 and confirmed after the restart is credited once, with one `done` webhook.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { databaseUrlOf, environment, startWithMerchant } from '../support/server-env.ts';
import { killServer, startServerProcess, stopAllChildren, type Credentials, type ServerProcess } from '../support/processes.ts';

describe.each(DATABASES)('deposits across kill -9 on %s', { timeout: 120_000 }, (kind) => {
  let env: Record<string, string>;
  const databases: TestDatabase[] = [];
  let server: ServerProcess | null = null;
  let merchant: Credentials;
  let receiver: Receiver;
  const start = async () => (server = await startServerProcess(env));
  const api = (method: string, p: string, json?: unknown) => server!.request(method, p, { json, token: merchant.publicToken });

  beforeAll(async () => {
    env = await environment(kind, databases);
    env = { ...env, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: '2000' };
    receiver = await startReceiver(() => merchant.secretKey);
    merchant = await startWithMerchant(kind, env, start, 'Crash Deposits');
    expect((await api('PUT', '/api/company/settings/webhook-url', { webHookUrl: receiver.url })).status).toBe(200);
  });

  afterAll(async () => {
    await stopAllChildren();
    await receiver?.close();
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('seen, kill -9, restart, confirmed twice: one credit and one done webhook', async () => {
    const address = (await api('POST', '/api/static-addresses', { asset: 'ltc', internalUserId: 'crash-user' })).body;
    const seen = await api('POST', '/api/sandbox/transfers', { address: address.address, amount: '2' });
    expect(seen.status, seen.text).toBe(201);
    expect((await killServer(server!)).signal).toBe('SIGKILL');
    await start();
    // The same report again after the restart, then the confirmation twice.
    expect((await api('POST', '/api/sandbox/transfers', { address: address.address, amount: '2', txHash: seen.body.txHash })).body.id).toBe(seen.body.id);
    for (let i = 0; i < 2; i++) expect((await api('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, {})).body.state).toBe('confirmed');
    const ofDeposit = () => receiver.received.filter((r) => r.json['hash'] === seen.body.txHash);
    await receiver.waitFor(() => ofDeposit().some((r) => r.json['status'] === 'done'), 30_000);
    await killServer(server!);
    server = null;
    const db = await openDatabase({ url: databaseUrlOf(env), migrate: false, poolSize: 1, role: 'test' });
    try {
      const credits = await db.prisma.ledgerEntry.count({ where: { transferId: seen.body.id, kind: 'deposit', account: 'merchant_available' } });
      expect(credits).toBe(1);
      const events = await db.prisma.event.findMany({ where: { subjectId: seen.body.id }, orderBy: { seq: 'asc' } });
      expect(events.map((e) => e.type)).toEqual(['deposit.processing', 'deposit.done']);
      expect((await verifyLedger(db.prisma)).problems).toEqual([]);
    } finally {
      await db.close();
    }
    expect(new Set(ofDeposit().filter((r) => r.json['status'] === 'done').map((r) => r.headers['webhook-id'])).size).toBe(1);
  });
});
