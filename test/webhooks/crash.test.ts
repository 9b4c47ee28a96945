// Webhook delivery across kill -9: the real server (src/bin/server.ts) as a child process on each database, killed with
// 400 deliveries pending and requests in flight, then restarted. Every delivery arrives; the only duplicates are
// the attempts that were in flight at the kill (sent, not yet recorded), resent with the same webhook-id and body
// once their lease ends, never earlier; there are at most WEBHOOK_PIPELINE of them per endpoint.
//
// The four lanes are both modes of two merchant accounts (test and live tenants, each with its own webhook URL and
// secret key): every event reaches its own mode's URL, signed with that mode's key, with its Payrail-Mode header.
//
// Three server runs on one database:
//   1. WEBHOOK_WORKER=0: four lanes set their webhook URL and 400 invoices are created (400 pending
//      deliveries, nothing sent), then a clean SIGTERM. This keeps the backlog's size independent of how fast
//      this machine creates invoices.
//   2. The worker is on. The receiver answers the first HOLD_AFTER requests and then holds every further one
//      (never answers), so each lane ends with its pipeline full of held requests. kill -9 as soon as every lane
//      has PIPELINE held (or shortly after the first, well inside WEBHOOK_TIMEOUT_MS).
//   3. Restart: the receiver answers everything; wait until all 400 event ids have arrived.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase } from '../../src/db/client.ts';
import { INVOICE_STATUS_MESSAGES } from '../../src/invoices/status.ts';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { databaseUrlOf, environment } from '../support/server-env.ts';
import { killServer, sleep, startServerProcess, stopAllChildren, stopServer, type ServerProcess } from '../support/processes.ts';
import { verifySpecSignature, verifyStandardSignature } from '../support/receiver.ts';

const LANES = 4;
const TOTAL = 400;
const PER_LANE = TOTAL / LANES;
/** The receiver answers this many requests in phase 2, then holds every further one. */
const HOLD_AFTER = 60;
const TIMEOUT_MS = 1_000;
/** The worker's lease (WEBHOOK_LEASE_MS): a claim comes back this long after it was taken. */
const LEASE_MS = 2_000;
const CREATE_CONCURRENCY = 20;
/** WEBHOOK_PIPELINE: attempts per endpoint started and not yet recorded, at most. */
const PIPELINE = 4;

interface Receipt {
  at: number;
  lane: number;
  id: string;
  timestamp: string;
  body: string;
  specValid: boolean;
  standardValid: boolean;
  /** The Payrail-Mode header. */
  mode: string;
  held: boolean;
}

/** One mode of one merchant account: where its webhooks go and what signs them. */
interface Lane {
  mode: 'test' | 'live';
  token: string;
  secretKey: string;
  /** The mode's tenant: the companyId of its events. */
  tenantId: string;
}

/** One node:http server, one path per lane (/hooks/<lane>), each verified with that lane's secret key. */
async function startLaneReceiver(secrets: string[]) {
  const receipts: Receipt[] = [];
  const state = { holdAfter: Infinity, answerDelayMs: 2 };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const lane = Number(/^\/hooks\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const secret = secrets[lane];
      if (secret === undefined) {
        res.writeHead(404).end();
        return;
      }
      const hold = receipts.length >= state.holdAfter;
      receipts.push({
        at: Date.now(),
        lane,
        id: String(req.headers['webhook-id'] ?? ''),
        timestamp: String(req.headers['webhook-timestamp'] ?? ''),
        body,
        specValid: safe(() => verifySpecSignature(secret, body, req.headers['signature'] as string | undefined)),
        standardValid: safe(() => verifyStandardSignature(secret, req.headers, body)),
        mode: String(req.headers['payrail-mode'] ?? ''),
        held: hold,
      });
      if (hold) held.push(res);
      else setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), state.answerDelayMs);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (lane: number) => `http://127.0.0.1:${port}/hooks/${lane}`,
    receipts,
    state,
    heldCount: () => receipts.filter((r) => r.held).length,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const safe = (f: () => boolean) => {
  try {
    return f();
  } catch {
    return false;
  }
};

/** Polls `predicate` every 20 ms; throws with `what()` after `timeoutMs`. */
async function until(predicate: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what()}`);
    await sleep(20);
  }
}

interface DeliveryRow {
  eventId: string;
  companyId: string;
  status: string;
  attempts: number;
  claimedUntil: Date | null;
  lastError: string | null;
}

describe.each(DATABASES)('webhooks survive kill -9 on %s', { timeout: 120_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  let databaseUrl: string;
  let receiver: Awaited<ReturnType<typeof startLaneReceiver>>;
  let lanes: Lane[];
  let env: Record<string, string>;
  let server: ServerProcess | null = null;

  /** A query on the database while no server holds it (PGlite admits one process at a time). */
  const query = async <T,>(sqlText: string): Promise<T[]> => {
    const db = await openDatabase({ url: databaseUrl, migrate: false, poolSize: 1, role: 'test' });
    try {
      return await db.prisma.$queryRawUnsafe<T[]>(sqlText);
    } finally {
      await db.close();
    }
  };
  const deliveries = () =>
    query<DeliveryRow>(
      `SELECT "eventId", "companyId"::text AS "companyId", "status", "attempts", "claimedUntil", "lastError" FROM "WebhookDelivery" ORDER BY "seq"`,
    );

  beforeAll(async () => {
    const base = await environment(kind, databases);
    databaseUrl = databaseUrlOf(base);
    // No server yet: create the merchants directly (the CLI does the same through the admin API); each gives a test
    // and a live lane.
    const db = await openDatabase({ url: databaseUrl, poolSize: 1, role: 'test' });
    try {
      lanes = [];
      for (let i = 0; i < LANES / 2; i++) {
        const account = await createCompany(db.prisma, { name: `Crash ${i}` });
        const live = await db.prisma.company.findUniqueOrThrow({ where: { accountId_mode: { accountId: account.companyId, mode: 'live' } } });
        lanes.push({ mode: 'test', token: account.test.publicToken, secretKey: account.test.secretKey, tenantId: account.companyId });
        lanes.push({ mode: 'live', token: account.live.publicToken, secretKey: account.live.secretKey, tenantId: live.id });
      }
    } finally {
      await db.close();
    }
    receiver = await startLaneReceiver(lanes.map((l) => l.secretKey));
    env = {
      ...base,
      WEBHOOK_LEASE_MS: String(LEASE_MS),
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_CONCURRENCY: '16',
      WEBHOOK_PIPELINE: String(PIPELINE),
      WEBHOOK_BATCH_SIZE: '100',
      WEBHOOK_RETENTION_DAYS: '30',
    };
  });

  afterAll(async () => {
    await stopAllChildren();
    await receiver?.close();
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('400 pending deliveries: all delivered after a kill -9, duplicates only for the attempts in flight', async () => {
    // ---- 1. The backlog, with no worker running.
    server = await startServerProcess({ ...env, WEBHOOK_WORKER: '0' });
    for (let lane = 0; lane < LANES; lane++) {
      const set = await server.request('PUT', '/api/company/settings/webhook-url', {
        token: lanes[lane]!.token,
        json: { webHookUrl: receiver.url(lane) },
      });
      expect(set.status, set.text).toBe(200);
    }
    // Round-robin over the lanes, CREATE_CONCURRENCY at a time, so every claim batch spans all lanes (both modes).
    const invoiceLane = new Map<string, number>();
    let next = 0;
    const creator = async () => {
      for (let i = next++; i < TOTAL; i = next++) {
        const lane = i % LANES;
        const res = await server!.request('POST', '/api/invoices/v1/regular', {
          token: lanes[lane]!.token,
          json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] },
        });
        expect(res.status, res.text).toBe(201);
        invoiceLane.set(res.body.id as string, lane);
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
    expect(invoiceLane.size).toBe(TOTAL);
    expect((await stopServer(server)).code).toBe(0);

    const events = await query<{ id: string; companyId: string; type: string; invoiceId: string }>(
      `SELECT "id", "companyId"::text AS "companyId", "type", "subjectId" AS "invoiceId" FROM "Event" ORDER BY "seq"`,
    );
    expect(events).toHaveLength(TOTAL);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['invoice.created']));
    const eventById = new Map(events.map((e) => [e.id, e]));
    const laneOfCompany = new Map(lanes.map((l, lane) => [l.tenantId, lane]));
    expect(laneOfCompany.size).toBe(LANES);
    const before = await deliveries();
    expect(before).toHaveLength(TOTAL);
    expect(before.every((d) => d.status === 'pending' && d.attempts === 0 && d.claimedUntil === null)).toBe(true);
    expect(receiver.receipts).toHaveLength(0);

    // ---- 2. Deliver some, then kill -9 with the pipeline of every lane full of held requests.
    receiver.state.holdAfter = HOLD_AFTER;
    server = await startServerProcess({ ...env, WEBHOOK_WORKER: '1' });
    await until(() => receiver.heldCount() >= 1, 60_000, () => `no request held (${receiver.receipts.length} received)`);
    const firstHeld = Date.now();
    // Every lane has its requests held within milliseconds; do not wait anywhere near WEBHOOK_TIMEOUT_MS for a
    // straggler (a held request that times out is recorded as a failed attempt and retried: still a duplicate of
    // an in-flight attempt, and the assertions below allow for it).
    await until(() => receiver.heldCount() >= LANES * PIPELINE || Date.now() - firstHeld > 300, 5_000, () => 'unreachable');
    const killedAt = Date.now();
    expect(await killServer(server)).toEqual({ code: null, signal: 'SIGKILL' });
    const heldIds = new Set(receiver.receipts.filter((r) => r.held).map((r) => r.id));
    const receivedBeforeKill = receiver.receipts.length;

    // At the kill: what the database had recorded. "In flight" = sent to the receiver, not recorded as delivered.
    const atKill = await deliveries();
    const statusAtKill = new Map(atKill.map((d) => [d.eventId, d]));
    const sentBeforeKill = new Set(receiver.receipts.map((r) => r.id));
    const inFlight = new Set([...sentBeforeKill].filter((id) => statusAtKill.get(id)?.status !== 'delivered'));
    const deliveredAtKill = atKill.filter((d) => d.status === 'delivered').length;
    const claimedAtKill = atKill.filter((d) => d.status === 'pending' && d.claimedUntil && d.claimedUntil.getTime() > killedAt);
    expect(heldIds.size).toBeGreaterThanOrEqual(1);
    for (const id of heldIds) expect(inFlight.has(id), `held ${id} is in flight`).toBe(true);
    // The duplicate bound: a lane has at most PIPELINE attempts started and not yet recorded (sent, or answered
    // and waiting for their batch to commit), so at most that many per lane (one mode of a merchant) can be sent twice because of the
    // kill. Unrecorded = receipts before the kill beyond the attempts recorded at the kill (a held request that
    // timed out before the kill was recorded as a failed attempt: it is retried on schedule, not by the crash).
    const receiptsBeforeKill = new Map<string, number>();
    for (const r of receiver.receipts) receiptsBeforeKill.set(r.id, (receiptsBeforeKill.get(r.id) ?? 0) + 1);
    const perLane = new Map<number, number>();
    for (const [id, n] of receiptsBeforeKill) {
      const unrecorded = n - statusAtKill.get(id)!.attempts;
      expect(unrecorded, `receipts of ${id} beyond its recorded attempts`).toBeGreaterThanOrEqual(0);
      const lane = laneOfCompany.get(eventById.get(id)!.companyId)!;
      perLane.set(lane, (perLane.get(lane) ?? 0) + unrecorded);
    }
    for (const [lane, n] of perLane) expect(n, `attempts not recorded at the kill, lane ${lane}`).toBeLessThanOrEqual(PIPELINE);
    // The pipeline was in use: some lane had more than one request out at once.
    expect(Math.max(...perLane.values())).toBeGreaterThan(1);
    // Some delivered, most pending.
    expect(deliveredAtKill).toBe(sentBeforeKill.size - inFlight.size);
    expect(deliveredAtKill).toBeGreaterThanOrEqual(HOLD_AFTER - LANES * PIPELINE);
    expect(TOTAL - deliveredAtKill).toBeGreaterThanOrEqual(TOTAL / 2);

    // ---- 3. Restart; everything arrives.
    receiver.state.holdAfter = Infinity;
    // The worker may send before the start-up log says "listening": the restart begins at the spawn.
    const restartedAt = Date.now();
    server = await startServerProcess({ ...env, WEBHOOK_WORKER: '1' });
    const distinct = () => new Set(receiver.receipts.map((r) => r.id)).size;
    await until(() => distinct() >= TOTAL, 90_000, () => `${distinct()} of ${TOTAL} event ids received`);
    const drainedAt = Date.now();
    // Nothing more goes out once all is delivered; then a clean stop records the last answers.
    const settledCount = receiver.receipts.length;
    await sleep(1_000);
    expect(receiver.receipts.length).toBe(settledCount);
    const restarted = server;
    expect((await stopServer(restarted)).code).toBe(0);
    const after = await deliveries();

    // Every event delivered, none lost, every row delivered.
    const receivedIds = new Set(receiver.receipts.map((r) => r.id));
    expect([...receivedIds].sort()).toEqual(events.map((e) => e.id).sort());
    expect(after).toHaveLength(TOTAL);
    // On failure: the rows and the restarted server's warnings and errors (a failed record, a timed-out attempt).
    const warnings = restarted.proc.stdout.split('\n').filter((l) => /"level":(40|50|60)/.test(l));
    expect(after.filter((d) => d.status !== 'delivered'), `not delivered; server warnings:\n${warnings.slice(0, 20).join('\n')}`).toEqual([]);
    // One recorded attempt each; an in-flight one may have two (its held request timed out before the kill, was
    // recorded as failed and retried).
    for (const d of after) expect(d.attempts, `attempts of ${d.eventId}`).toBe(inFlight.has(d.eventId) ? Math.min(Math.max(d.attempts, 1), 2) : 1);
    const [attemptRows] = await query<{ n: number; ok: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE "statusCode" = 200)::int AS ok FROM "WebhookAttempt"`,
    );
    expect(attemptRows!.ok).toBe(TOTAL);
    expect(attemptRows!.n).toBe(after.reduce((s, d) => s + d.attempts, 0));

    // Each receipt: both signatures valid (with its mode's secret key), sent to its mode's URL with its mode in
    // Payrail-Mode, the exact spec body of its event.
    for (const r of receiver.receipts) {
      expect(r.specValid && r.standardValid, `signatures of ${r.id}`).toBe(true);
      expect(r.mode, r.id).toBe(lanes[r.lane]!.mode);
      const event = eventById.get(r.id)!;
      expect(r.lane).toBe(laneOfCompany.get(event.companyId));
      expect(invoiceLane.get(event.invoiceId)).toBe(r.lane);
      expect(r.body).toBe(JSON.stringify({ invoiceId: event.invoiceId, status: 'created', message: INVOICE_STATUS_MESSAGES.created }));
    }

    // Duplicates: exactly the attempts in flight at the kill, each received twice with the same id and body.
    const byId = new Map<string, Receipt[]>();
    for (const r of receiver.receipts) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
    const duplicated = [...byId].filter(([, rs]) => rs.length > 1);
    expect(new Set(duplicated.map(([id]) => id))).toEqual(inFlight);
    expect(receiver.receipts.length).toBe(TOTAL + inFlight.size);
    for (const [id, rs] of duplicated) {
      expect(rs, `receipts of ${id}`).toHaveLength(2);
      const [first, second] = rs as [Receipt, Receipt];
      expect(second.id).toBe(first.id);
      expect(hash(second.body)).toBe(hash(first.body));
      expect(first.at).toBeLessThanOrEqual(killedAt);
      expect(second.at).toBeGreaterThanOrEqual(restartedAt);
    }

    // Claims taken before the kill came back only when their lease ended, not before.
    for (const d of claimedAtKill) {
      const resent = byId.get(d.eventId)!.filter((r) => r.at > killedAt);
      expect(resent, `receipts of ${d.eventId} after the restart`).toHaveLength(1);
      expect(resent[0]!.at).toBeGreaterThanOrEqual(d.claimedUntil!.getTime());
    }

    // eslint-disable-next-line no-console
    console.info(
      `webhook crash: ${receivedBeforeKill} requests before the kill (${deliveredAtKill} delivered, ${heldIds.size} held, ${inFlight.size} in flight), ` +
        `${claimedAtKill.length} claimed rows waited for the lease (${LEASE_MS} ms); drained ${((drainedAt - restartedAt) / 1000).toFixed(1)} s after the restart; ` +
        `${receiver.receipts.length} receipts for ${TOTAL} events (${kind})`,
    );
  });
});

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
