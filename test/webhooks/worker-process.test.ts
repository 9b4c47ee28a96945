// `npm run webhooks:worker`: delivery from processes of their own (PostgreSQL). Two workers share the queue and
// never send one delivery twice; an endpoint is served by one of them at a time (its lane lease), so its order
// holds across processes; SIGTERM stops each cleanly and gives their lanes back. On the embedded database the
// worker refuses to start.
import { testMerchant, type TestMerchant } from '../support/server.ts';
import { describe, expect, it, afterAll } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import {
  launch,
  parseJson,
  runCli,
  sleep,
  startServerProcess,
  stopAllChildren,
  stopServer,
  tempDir,
  waitForExit,
  type Proc,
  type ServerProcess,
} from '../support/processes.ts';
import { InFlight, startReceiver, type Receiver, type ReceiverOptions } from '../support/receiver.ts';

afterAll(() => stopAllChildren());

describe.skipIf(!DATABASES.includes('postgres'))('webhook worker processes on postgres', { timeout: 120_000 }, () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));

  /**
   * A fresh database with `count` merchants, a receiver each, and the server without its own worker (webhook URLs
   * set through it). `run` gets them; the receivers are closed afterwards.
   */
  async function withMerchants(
    count: number,
    receiverOptions: ReceiverOptions,
    run: (ctx: { url: string; env: Record<string, string>; server: ServerProcess; merchants: TestMerchant[]; receivers: Receiver[] }) => Promise<void>,
  ): Promise<void> {
    const database = await freshDatabase('postgres');
    databases.push(database);
    const db = await openDatabase({ url: database.url, migrate: false, poolSize: 1 });
    const merchants = await Promise.all(Array.from({ length: count }, (_, i) => createCompany(db.prisma, { name: `Worker ${i}` }).then(testMerchant)));
    await db.close();
    const receivers = await Promise.all(merchants.map((m) => startReceiver(() => m.secretKey, receiverOptions)));
    try {
      const env = { DATABASE_URL: database.url, DATA_DIR: tempDir('payrail-workers-'), WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '50' };
      const server = await startServerProcess({ ...env, WEBHOOK_WORKER: '0' });
      for (const [i, m] of merchants.entries()) {
        const set = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: receivers[i]!.url } });
        expect(set.status).toBe(200);
      }
      await run({ url: database.url, env, server, merchants, receivers });
      expect((await stopServer(server)).code).toBe(0);
    } finally {
      for (const r of receivers) await r.close();
    }
  }

  /** Creates `perMerchant` invoices for each merchant, the merchants in parallel; answers the invoice ids per merchant. */
  async function createInvoices(server: ServerProcess, merchants: TestMerchant[], perMerchant: number): Promise<string[][]> {
    return Promise.all(
      merchants.map(async (m) => {
        const ids: string[] = [];
        // One after another: each merchant's events commit in creation order.
        for (let n = 0; n < perMerchant; n++) {
          const res = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
          expect(res.status).toBe(201);
          ids.push(res.body.id as string);
        }
        return ids;
      }),
    );
  }

  /** SIGTERM; each exits cleanly, having logged no warning or error (a failed claim or release, a deadlock). */
  async function stopWorkers(workers: Proc[]): Promise<void> {
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) {
      expect(await waitForExit(w)).toMatchObject({ code: 0, signal: null });
      const problems = w.stdout.split('\n').filter((line) => ((parseJson(line) as { level?: number } | undefined)?.level ?? 0) >= 40);
      expect(problems).toEqual([]);
    }
  }

  it('two workers deliver every event exactly once and stop on SIGTERM', async () => {
    await withMerchants(3, {}, async ({ env, server, merchants, receivers }) => {
      // Small batches, so the two workers' claims interleave.
      const workers = [0, 1].map(() => launch('src/bin/webhooks-worker.ts', [], { ...env, WEBHOOK_BATCH_SIZE: '5', LOG_LEVEL: 'info' }));
      const PER_MERCHANT = 60;
      const created = await createInvoices(server, merchants, PER_MERCHANT);
      for (const r of receivers) await r.waitFor((got) => got.length >= PER_MERCHANT, 30_000);
      // Nothing more arrives: no delivery was sent twice.
      await sleep(1_000);
      for (const [i, r] of receivers.entries()) {
        expect(r.received.map((x) => String(x.json['invoiceId'])).sort()).toEqual([...created[i]!].sort());
        expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(PER_MERCHANT);
        expect(r.received.every((x) => x.specSignatureValid && x.standardSignatureValid)).toBe(true);
      }
      // Both workers took part.
      for (const w of workers) expect(w.stdout).toContain('webhook worker running');
      await stopWorkers(workers);
    });
  });

  it('two workers never serve one endpoint at once: with WEBHOOK_PIPELINE=1 each endpoint gets one request at a time, every event once, in event order', async () => {
    const MERCHANTS = 5;
    const PER_MERCHANT = 40;
    /** Lanes per worker process: fewer than the endpoints, so lanes change hands between the processes all along. */
    const LANES_PER_WORKER = 2;
    const everyEndpoint = new InFlight();
    // Answers take a while, so that two requests to one endpoint at once would overlap at the receiver.
    await withMerchants(MERCHANTS, { answerDelayMs: 15, alsoCount: everyEndpoint }, async ({ url, env, server, merchants, receivers }) => {
      const workers = [0, 1].map(() =>
        launch('src/bin/webhooks-worker.ts', [], {
          ...env,
          WEBHOOK_PIPELINE: '1',
          WEBHOOK_BATCH_SIZE: '3',
          WEBHOOK_CONCURRENCY: String(LANES_PER_WORKER),
          LOG_LEVEL: 'info',
        }),
      );
      await Promise.all(workers.map((w) => w.waitForStdout((out) => out.includes('webhook worker running'), 'the worker running')));
      await createInvoices(server, merchants, PER_MERCHANT);
      for (const r of receivers) await r.waitFor((got) => got.length >= PER_MERCHANT, 60_000);
      // Nothing more arrives: no delivery was sent twice.
      await sleep(1_000);

      for (const [i, m] of merchants.entries()) {
        const feed = await server.request('GET', `/api/company/events?limit=${PER_MERCHANT + 10}`, { token: m.publicToken });
        expect(feed.status).toBe(200);
        const eventOrder = (feed.body.events as { id: string }[]).map((e) => e.id);
        expect(eventOrder).toHaveLength(PER_MERCHANT);
        const r = receivers[i]!;
        expect(r.inFlight.most, `most requests in flight at once to merchant ${i}`).toBe(1);
        expect(
          r.received.map((x) => x.headers['webhook-id']),
          `merchant ${i}: events as received, against the event order`,
        ).toEqual(eventOrder);
      }
      // Both processes sent at the same time: one process alone has at most LANES_PER_WORKER requests out.
      expect(everyEndpoint.most).toBeGreaterThan(LANES_PER_WORKER);

      await stopWorkers(workers);
      // Stopped workers closed their lanes and gave the leases back.
      const db = await openDatabase({ url, migrate: false, poolSize: 1 });
      try {
        expect(await db.prisma.webhookLane.count({ where: { owner: { not: null } } })).toBe(0);
        expect(await db.prisma.webhookDelivery.count({ where: { status: { not: 'delivered' } } })).toBe(0);
      } finally {
        await db.close();
      }
    });
  });
});

describe('webhook worker process on the embedded database', () => {
  it('refuses to start: an embedded database belongs to the server process', async () => {
    const res = await runCli('src/bin/webhooks-worker.ts', [], { DATA_DIR: tempDir('payrail-worker-pglite-') });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/needs DATABASE_URL=postgresql/);
  });
});
