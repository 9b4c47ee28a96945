// The worker's lanes under pipelining, with a scripted sender in place of HTTP (the real sender is covered by
// delivery.test.ts and crash.test.ts): attempts start in event order per endpoint within a sliding window of
// WEBHOOK_PIPELINE, a failure in the middle of a window stops the lane until what is in flight has ended and been
// recorded, and batched recording writes every attempt exactly once. Two workers on one database never serve one
// endpoint at once (its lane lease), and a lane leased by a worker that is gone comes back when the lease ends. On
// both databases.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Clock } from '../../src/clock.ts';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import type { SendRequest, SendResult, WebhookSender } from '../../src/webhooks/sender.ts';
import { WebhookWorker, type AttemptRecorder, type WorkerOptions } from '../../src/webhooks/worker.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';

const PIPELINE = 4;

/** Log of what the sender saw, in the order it happened: starts and ends of attempts. */
type Step = { kind: 'start' | 'end'; eventId: string; url: string };

/** A sender whose answers the test decides: `answer` runs for each request (default: 200 after `delayMs()`). */
class ScriptedSender {
  readonly timeoutMs = 10_000;
  /** Endpoints this sender sent to. */
  readonly urls = new Set<string>();
  answer: (req: SendRequest) => Promise<Pick<SendResult, 'statusCode'>> = async () => ({ statusCode: 200 });

  /** `log` may be shared by several senders (one per worker), to see them side by side. */
  constructor(readonly log: Step[] = []) {}

  async send(req: SendRequest): Promise<SendResult> {
    this.urls.add(req.url);
    this.log.push({ kind: 'start', eventId: req.eventId, url: req.url });
    const { statusCode } = await this.answer(req);
    this.log.push({ kind: 'end', eventId: req.eventId, url: req.url });
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return { ok, statusCode, durationMs: 1, error: ok ? null : `status ${statusCode}`, responseBody: ok ? 'ok' : 'no' };
  }

  starts(url?: string): string[] {
    return this.log.filter((s) => s.kind === 'start' && (url === undefined || s.url === url)).map((s) => s.eventId);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASES)('webhook lanes with a pipeline of %i on %s'.replace('%i', String(PIPELINE)), (kind) => {
  let database: TestDatabase;
  let db: Database;
  const workers: WebhookWorker[] = [];

  beforeAll(async () => {
    database = await freshDatabase(kind);
    db = await openDatabase({ url: database.url, migrate: false, poolSize: 4, role: 'test' });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await db?.close();
    await database?.drop();
  });

  /** Merchants with a webhook URL each (the scripted sender only looks at it). */
  async function endpoints(n: number) {
    const out: { companyId: string; url: string }[] = [];
    for (let i = 0; i < n; i++) {
      const { companyId } = await createCompany(db.prisma, { name: `Pipeline ${i}` });
      const url = `https://endpoint-${randomUUID()}.example/hooks`;
      await db.prisma.company.update({ where: { id: companyId }, data: { webhookUrl: url } });
      out.push({ companyId, url });
    }
    return out;
  }

  /** The outbox's rows for `perEndpoint` events of each endpoint, interleaved; answers their ids in seq order. */
  async function enqueue(eps: { companyId: string }[], perEndpoint: number): Promise<Map<string, string[]>> {
    const ids: string[] = [];
    const companies: string[] = [];
    for (let i = 0; i < perEndpoint; i++) {
      for (const e of eps) {
        ids.push(randomUUID());
        companies.push(e.companyId);
      }
    }
    await db.prisma.$executeRaw`
      WITH input AS (SELECT * FROM unnest(${ids}::text[], ${companies}::text[]) WITH ORDINALITY AS t(id, company, ord)),
      e AS (
        INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload")
        SELECT id, company::uuid, 'invoice.created', 'invoice', id, json_build_object('invoiceId', id) FROM input ORDER BY ord
        RETURNING "id", "seq", "companyId"
      )
      INSERT INTO "WebhookDelivery" ("id", "eventId", "companyId", "url", "seq", "status", "nextAttemptAt")
      SELECT gen_random_uuid(), e."id", e."companyId", c."webhookUrl", e."seq", 'pending', now()
      FROM e JOIN "Company" c ON c."id" = e."companyId"`;
    const rows = await db.prisma.webhookDelivery.findMany({ where: { eventId: { in: ids } }, orderBy: { seq: 'asc' }, select: { eventId: true, companyId: true } });
    const byCompany = new Map<string, string[]>();
    for (const r of rows) byCompany.set(r.companyId, [...(byCompany.get(r.companyId) ?? []), r.eventId]);
    return byCompany;
  }

  function startWorker(sender: ScriptedSender, options: Partial<WorkerOptions> = {}) {
    const worker = new WebhookWorker(
      { db: db.prisma, clock: new Clock(db.prisma, false), logger: createLogger('silent'), sender: sender as unknown as WebhookSender },
      { concurrency: 16, batchSize: 100, leaseMs: 30_000, pollMs: 50, pipeline: PIPELINE, asyncCommit: kind === 'postgres', ...options },
    );
    workers.push(worker);
    worker.start();
    return worker;
  }

  const deliveries = (eventIds: string[]) =>
    db.prisma.webhookDelivery.findMany({
      where: { eventId: { in: eventIds } },
      select: { eventId: true, status: true, attempts: true, claimedUntil: true, lastStatusCode: true, nextAttemptAt: true, attemptLog: { select: { attempt: true, statusCode: true } } },
    });

  it('starts each endpoint’s attempts in event order, each once the one PIPELINE places earlier has ended; records each once, in batches', async () => {
    const eps = await endpoints(6);
    const expected = await enqueue(eps, 40);
    const sender = new ScriptedSender();
    // Uneven answer times, so attempts end out of order within a window.
    sender.answer = async () => {
      await sleep(Math.random() * 6);
      return { statusCode: 200 };
    };
    const worker = startWorker(sender);
    const all = [...expected.values()].flat();
    await expect.poll(async () => (await deliveries(all)).filter((d) => d.status === 'delivered').length, { timeout: 20_000 }).toBe(all.length);
    await worker.stop();

    for (const { companyId, url } of eps) {
      const order = expected.get(companyId)!;
      // Started in seq order, each exactly once.
      expect(sender.starts(url)).toEqual(order);
      // The sliding window: the attempt PIPELINE places earlier ended before this one started; and at some point
      // the window was full (the pipeline was used).
      const position = new Map(order.map((id, i) => [id, i]));
      const steps = sender.log.filter((s) => s.url === url);
      let inFlight = 0;
      let most = 0;
      const ended = new Set<number>();
      for (const s of steps) {
        const i = position.get(s.eventId)!;
        if (s.kind === 'end') {
          ended.add(i);
          inFlight--;
          continue;
        }
        if (i >= PIPELINE) expect(ended.has(i - PIPELINE), `event ${i} started before event ${i - PIPELINE} ended`).toBe(true);
        inFlight++;
        most = Math.max(most, inFlight);
      }
      expect(most).toBeLessThanOrEqual(PIPELINE);
      expect(most).toBeGreaterThan(1);
    }

    // Every attempt recorded once: one attempt row per delivery, attempt 1, answered 200, no claim left.
    const rows = await deliveries(all);
    expect(rows).toHaveLength(all.length);
    for (const d of rows) {
      expect(d).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, claimedUntil: null });
      expect(d.attemptLog).toEqual([{ attempt: 1, statusCode: 200 }]);
    }
    // ... and in batches: fewer statements than attempts.
    const stats = (worker as unknown as { recorder: AttemptRecorder }).recorder.stats;
    expect(stats.rows).toBe(all.length);
    expect(stats.statements).toBeLessThan(all.length / 2);
  });

  it('records failures and successes of one batch apart: every attempt once, retries scheduled, numbered in order', async () => {
    const eps = await endpoints(8);
    const expected = await enqueue(eps, 12);
    const all = [...expected.values()].flat();
    const failing = new Set(all.filter((_, i) => i % 7 === 3));
    const sender = new ScriptedSender();
    sender.answer = async (req) => {
      await sleep(Math.random() * 3);
      return { statusCode: failing.has(req.eventId) ? 500 : 200 };
    };
    const worker = startWorker(sender);
    const settled = async () => (await deliveries(all)).filter((d) => d.attempts === 1 && d.claimedUntil === null).length;
    await expect.poll(settled, { timeout: 20_000 }).toBe(all.length);
    await worker.stop();
    const started = Date.now();
    for (const d of await deliveries(all)) {
      if (failing.has(d.eventId)) {
        expect(d).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
        expect(d.attemptLog).toEqual([{ attempt: 1, statusCode: 500 }]);
        // Retried on schedule: about 5 s after the failure, not at once.
        expect(d.nextAttemptAt.getTime()).toBeGreaterThan(started + 3_000);
      } else {
        expect(d).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
        expect(d.attemptLog).toEqual([{ attempt: 1, statusCode: 200 }]);
      }
    }
    // Nothing sent twice.
    expect(sender.starts().length).toBe(all.length);
    expect(new Set(sender.starts()).size).toBe(all.length);
    const stats = (worker as unknown as { recorder: AttemptRecorder }).recorder.stats;
    expect(stats.rows).toBe(all.length);
  });

  it('a failure in the middle of a window: nothing more starts until the attempts in flight have ended and been recorded', async () => {
    const [ep] = await endpoints(1);
    const order = (await enqueue([ep!], 10)).get(ep!.companyId)!;
    const sender = new ScriptedSender();
    const answers = new Map<string, (status: number) => void>();
    sender.answer = (req) => new Promise((resolve) => answers.set(req.eventId, (statusCode) => resolve({ statusCode })));
    const answer = (i: number, status: number) => answers.get(order[i]!)!(status);
    const row = async (i: number) => (await deliveries([order[i]!]))[0]!;
    const worker = startWorker(sender);

    // The window fills: events 0..3 in flight.
    await expect.poll(() => sender.starts().length, { timeout: 10_000 }).toBe(PIPELINE);
    expect(sender.starts()).toEqual(order.slice(0, PIPELINE));

    // Event 2 fails: recorded at once, and nothing new starts.
    answer(2, 500);
    await expect.poll(async () => (await row(2)).attempts, { timeout: 10_000 }).toBe(1);
    // Events 3 and 0 answer 200: recorded delivered as they went (they were received), still nothing new starts
    // while event 1 is in flight.
    answer(3, 200);
    answer(0, 200);
    await expect.poll(async () => [(await row(0)).status, (await row(3)).status], { timeout: 10_000 }).toEqual(['delivered', 'delivered']);
    await sleep(300);
    expect(sender.starts()).toEqual(order.slice(0, PIPELINE));
    // The rest is still held by the lane (claimed), not sent.
    for (let i = PIPELINE; i < order.length; i++) expect((await row(i)).attempts).toBe(0);

    // Event 1 ends: the lane hands the rest back, and they go out, in order; event 2 waits for its retry.
    answer(1, 200);
    await expect.poll(() => sender.starts().length, { timeout: 10_000 }).toBeGreaterThan(PIPELINE);
    expect(sender.starts()[PIPELINE]).toBe(order[PIPELINE]);
    const endOf1 = sender.log.findIndex((s) => s.kind === 'end' && s.eventId === order[1]);
    const startOf4 = sender.log.findIndex((s) => s.kind === 'start' && s.eventId === order[PIPELINE]);
    expect(endOf1).toBeLessThan(startOf4);
    for (let i = PIPELINE; i < order.length; i++) {
      await expect.poll(() => answers.has(order[i]!), { timeout: 10_000 }).toBe(true);
      answer(i, 200);
    }
    await expect.poll(async () => (await deliveries(order)).filter((d) => d.status === 'delivered').length, { timeout: 10_000 }).toBe(order.length - 1);
    expect(sender.starts()).toEqual(order);
    const failed = await row(2);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
    expect(failed.attemptLog).toEqual([{ attempt: 1, statusCode: 500 }]);
    // Before its retry comes due: this sender would hold it (and the next tests' deliveries) unanswered.
    await worker.stop();
  });

  it('two workers on one database serve an endpoint one at a time: with a pipeline of 1, one attempt at once, in event order', async () => {
    const eps = await endpoints(5);
    const expected = await enqueue(eps, 30);
    const all = [...expected.values()].flat();
    const log: Step[] = [];
    const senders = [new ScriptedSender(log), new ScriptedSender(log)];
    for (const sender of senders) {
      sender.answer = async () => {
        await sleep(1 + Math.random() * 4);
        return { statusCode: 200 };
      };
    }
    // Two lanes each, five endpoints: lanes change hands between the workers all along.
    const pair = senders.map((sender) => startWorker(sender, { concurrency: 2, batchSize: 3, pipeline: 1 }));
    await expect.poll(async () => (await deliveries(all)).filter((d) => d.status === 'delivered').length, { timeout: 30_000 }).toBe(all.length);
    await Promise.all(pair.map((w) => w.stop()));

    for (const { companyId, url } of eps) {
      // Each exactly once, in seq order, whichever worker sent it.
      expect(log.filter((s) => s.kind === 'start' && s.url === url).map((s) => s.eventId)).toEqual(expected.get(companyId));
      let inFlight = 0;
      for (const step of log.filter((s) => s.url === url)) {
        inFlight += step.kind === 'start' ? 1 : -1;
        expect(inFlight, `attempts in flight at once to ${url}`).toBeLessThanOrEqual(1);
      }
    }
    // Both workers served some of these endpoints.
    for (const sender of senders) expect(eps.filter((e) => sender.urls.has(e.url)).length).toBeGreaterThan(0);
    // Stopped workers hold no lane (handed back: the rows stay, with no owner).
    expect(await db.prisma.webhookLane.count({ where: { companyId: { in: eps.map((e) => e.companyId) }, owner: { not: null } } })).toBe(0);
  });

  it('deliveries of an endpoint whose URL was removed fail at once ("no webhook URL is set"), nothing sent, the lane handed back', async () => {
    const [gone, kept] = await endpoints(2);
    const expected = await enqueue([gone!, kept!], 3);
    await db.prisma.company.update({ where: { id: gone!.companyId }, data: { webhookUrl: null } });
    const sender = new ScriptedSender();
    const worker = startWorker(sender);
    const all = [...expected.values()].flat();
    await expect.poll(async () => (await deliveries(all)).filter((d) => d.status !== 'pending').length, { timeout: 20_000 }).toBe(all.length);
    await worker.stop();
    expect(sender.starts()).toEqual(expected.get(kept!.companyId));
    const failed = await db.prisma.webhookDelivery.findMany({ where: { eventId: { in: expected.get(gone!.companyId)! } } });
    for (const d of failed) expect(d).toMatchObject({ status: 'failed', claimedUntil: null, attempts: 0, lastError: 'no webhook URL is set' });
    expect(await db.prisma.webhookLane.findUnique({ where: { companyId: gone!.companyId } })).toMatchObject({ owner: null });
  });

  it('a worker that lost its lane writes nothing of it: its attempt record and its hand-back are fenced by the generation', async () => {
    const [ep] = await endpoints(1);
    const order = (await enqueue([ep!], 2)).get(ep!.companyId)!;
    const sender = new ScriptedSender();
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    sender.answer = async () => {
      await gate;
      return { statusCode: 500 };
    };
    const worker = startWorker(sender, { pipeline: 1 });
    await expect.poll(() => sender.starts().length, { timeout: 10_000 }).toBe(1);
    const taken = await db.prisma.webhookLane.findUniqueOrThrow({ where: { companyId: ep!.companyId } });
    // Meanwhile another worker took the endpoint over (as after this one paused past its lease): a new owner and
    // generation on the lane, its own claims on the deliveries.
    const newOwner = randomUUID();
    const newUntil = new Date(Date.now() + 60_000);
    await db.prisma.webhookLane.update({ where: { companyId: ep!.companyId }, data: { owner: newOwner, generation: taken.generation + 1, leaseUntil: newUntil } });
    await db.prisma.webhookDelivery.updateMany({ where: { eventId: { in: order } }, data: { claimedUntil: newUntil } });
    // The stale attempt ends (a failure, which would schedule a retry over the new holder's state), its lane stops.
    answer();
    await worker.stop();

    expect(sender.starts()).toEqual([order[0]]);
    const after = await deliveries(order);
    for (const d of after) {
      expect(d, d.eventId).toMatchObject({ status: 'pending', attempts: 0, attemptLog: [], lastStatusCode: null });
      expect(d.claimedUntil?.getTime(), `claim of ${d.eventId} kept`).toBe(newUntil.getTime());
    }
    expect(await db.prisma.webhookLane.findUniqueOrThrow({ where: { companyId: ep!.companyId } })).toMatchObject({
      owner: newOwner,
      generation: taken.generation + 1,
    });
  });

  it('a lane still leased by a worker that is gone comes back when its lease ends, its deliveries in order', async () => {
    const [held, free] = await endpoints(2);
    const expected = await enqueue([held!, free!], 5);
    const order = expected.get(held!.companyId)!;
    // As a crashed worker leaves it: the lane leased, its first delivery claimed, both until the same time.
    const leaseEnds = new Date(Date.now() + 1_500);
    await db.prisma.webhookLane.create({ data: { companyId: held!.companyId, owner: randomUUID(), leaseUntil: leaseEnds } });
    await db.prisma.webhookDelivery.updateMany({ where: { eventId: order[0]! }, data: { claimedUntil: leaseEnds } });
    const sender = new ScriptedSender();
    const startedAt = new Map<string, number>();
    sender.answer = async (req) => {
      startedAt.set(req.eventId, Date.now());
      return { statusCode: 200 };
    };
    const worker = startWorker(sender);
    const all = [...expected.values()].flat();
    await expect.poll(async () => (await deliveries(all)).filter((d) => d.status === 'delivered').length, { timeout: 20_000 }).toBe(all.length);
    await worker.stop();

    expect(sender.starts(free!.url)).toEqual(expected.get(free!.companyId));
    // Nothing of the held endpoint went out before the lease ended (its later events did not pass the claimed
    // one), then all of it, in order.
    expect(sender.starts(held!.url)).toEqual(order);
    for (const id of order) expect(startedAt.get(id)!).toBeGreaterThanOrEqual(leaseEnds.getTime());
    expect(await db.prisma.webhookLane.count({ where: { companyId: { in: [held!.companyId, free!.companyId] }, owner: { not: null } } })).toBe(0);
  });
});
