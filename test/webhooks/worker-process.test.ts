// `npm run webhooks:worker`: delivery from processes of their own (PostgreSQL). Two workers share the queue and
// never send one delivery twice; SIGTERM stops each cleanly. On the embedded database the worker refuses to start.
import { describe, expect, it, afterAll } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { launch, runCli, startServerProcess, stopAllChildren, stopServer, tempDir, waitForExit } from '../support/processes.ts';
import { startReceiver } from '../support/receiver.ts';

afterAll(() => stopAllChildren());

describe.skipIf(!DATABASES.includes('postgres'))('webhook worker processes on postgres', { timeout: 120_000 }, () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  // (Order across two workers is not promised: docs/webhooks.md.)
  it('two workers deliver every event exactly once and stop on SIGTERM', async () => {
    database = await freshDatabase('postgres');
    const db = await openDatabase({ url: database.url, migrate: false, poolSize: 1 });
    const merchants = await Promise.all([0, 1, 2].map((i) => createCompany(db.prisma, { name: `Worker ${i}` })));
    await db.close();
    const receivers = await Promise.all(merchants.map((m) => startReceiver(() => m.secretKey)));
    try {
      const env = { DATABASE_URL: database.url, DATA_DIR: tempDir('payrail-workers-'), WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '50' };
      const server = await startServerProcess({ ...env, WEBHOOK_WORKER: '0' });
      for (const [i, m] of merchants.entries()) {
        const set = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receivers[i]!.url } });
        expect(set.status).toBe(200);
      }
      // Small batches, so the two workers' claims interleave.
      const workers = [0, 1].map(() => launch('src/webhooks/main.ts', [], { ...env, WEBHOOK_BATCH_SIZE: '5', LOG_LEVEL: 'info' }));
      const PER_MERCHANT = 60;
      const created: string[][] = merchants.map(() => []);
      await Promise.all(
        merchants.map(async (m, i) => {
          for (let n = 0; n < PER_MERCHANT; n++) {
            const res = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
            expect(res.status).toBe(201);
            created[i]!.push(res.body.id as string);
          }
        }),
      );
      for (const r of receivers) await r.waitFor((got) => got.length >= PER_MERCHANT, 30_000);
      // Nothing more arrives: no delivery was sent twice.
      await new Promise((res) => setTimeout(res, 1_000));
      for (const [i, r] of receivers.entries()) {
        expect(r.received.map((x) => String(x.json['invoiceId'])).sort()).toEqual([...created[i]!].sort());
        expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(PER_MERCHANT);
        expect(r.received.every((x) => x.specSignatureValid && x.standardSignatureValid)).toBe(true);
      }
      // Both workers took part.
      for (const w of workers) expect(w.stdout).toContain('webhook worker running');
      for (const w of workers) w.child.kill('SIGTERM');
      for (const w of workers) expect(await waitForExit(w)).toMatchObject({ code: 0, signal: null });
      expect((await stopServer(server)).code).toBe(0);
    } finally {
      for (const r of receivers) await r.close();
    }
  });
});

describe('webhook worker process on the embedded database', () => {
  it('refuses to start: an embedded database belongs to the server process', async () => {
    const res = await runCli('src/webhooks/main.ts', [], { DATA_DIR: tempDir('payrail-worker-pglite-') });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/needs DATABASE_URL=postgresql/);
  });
});
