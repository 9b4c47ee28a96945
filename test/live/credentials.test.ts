// A rotated token ends the live connections opened with it: graphql-ws sockets are closed with 4403 and SSE streams
// end (a last UNAUTHENTICATED message, then `complete`) within 2 s of `merchant rotate-token`, whether the CLI goes
// through the running server's admin API or opens the database itself, and on every instance. Other merchants'
// connections go on. The real server and the real CLI as child processes.
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { EVENTS_CHANNEL } from '../../src/core/bus.ts';
import { openDatabase } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { liveSocket, sseStream, until, type LiveSocket, type SseStream } from '../support/live.ts';
import { credentialsFrom, startServerProcess, stopAllChildren, tempDir, type Credentials, type ServerProcess } from '../support/processes.ts';
import { cli, createInvoice, environment } from '../support/server-env.ts';

afterAll(() => stopAllChildren());

const EVENTS = 'subscription { invoiceEvents { id } }';
/** How long after the rotation a connection of the old token may still be open. */
const WITHIN_MS = 2_000;
const CLOSE_REASON = 'Forbidden: the token of this connection was rotated or revoked';

interface Following {
  socket: LiveSocket;
  stream: SseStream;
  /** Both have delivered this invoice's creation. */
  delivered(invoiceId: string): boolean;
  ended(): boolean;
}

const idsOf = (messages: { data?: unknown }[]) => messages.map((m) => (m.data as { invoiceEvents?: { id: string } } | undefined)?.invoiceEvents?.id);

/**
 * A merchant's invoice events on `on`, over graphql-ws and over SSE, both proven running: invoices made on
 * `through` (any instance) until both have delivered one.
 */
async function follow(on: ServerProcess, token: string, through: ServerProcess = on): Promise<Following> {
  const socket = liveSocket(on.url, { token });
  expect(await socket.accepted).toBe('ack');
  socket.subscribe('events', EVENTS);
  const stream = await sseStream(on.url, { query: EVENTS, token });
  expect(stream.status).toBe(200);
  const following: Following = {
    socket,
    stream,
    delivered: (id) => idsOf(socket.nexts.get('events') ?? []).includes(id) && idsOf(stream.messages).includes(id),
    ended: () => socket.closedWith !== null && stream.endedAt !== null,
  };
  for (const deadline = Date.now() + 30_000; ; ) {
    const created = await createInvoice(through, token);
    expect(created.status, created.text).toBe(201);
    if (await until(() => following.delivered(created.body.id as string), 1_000).then(() => true, () => false)) return following;
    if (Date.now() > deadline) throw new Error('the live connections never delivered an invoice');
  }
}

/** Both connections still deliver: a new invoice of the merchant reaches them. */
async function stillFollowing(following: Following, token: string, through: ServerProcess): Promise<void> {
  const created = await createInvoice(through, token);
  expect(created.status, created.text).toBe(201);
  await until(() => following.delivered(created.body.id as string), 10_000, 'the other merchant’s connections to deliver');
  expect(following.socket.closedWith).toBeNull();
  expect(following.stream.endedAt).toBeNull();
}

/** Ended as a revoked credential ends them: 4403 with its reason, and a last UNAUTHENTICATED message then `complete`. */
function expectRevoked(following: Following): void {
  expect(following.socket.closedWith).toEqual({ code: 4403, reason: CLOSE_REASON });
  expect(following.stream.messages.at(-1)).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' }, message: expect.stringContaining('rotated or revoked') }] });
  expect(following.stream.completed).toBe(true);
}

const rotate = async (env: Record<string, string>, companyId: string) => {
  const rotated = await cli(env, 'rotate-token', '--company-id', companyId, '--mode', 'test');
  expect(rotated.code, rotated.stderr).toBe(0);
  return { publicToken: rotated.json.publicToken as string, via: rotated.stderr, at: Date.now() };
};

describe.each(DATABASES)('a rotated token ends its live connections on %s', { timeout: 120_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  let env: Record<string, string>;
  let server: ServerProcess;
  afterAll(async () => {
    await stopAllChildren();
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('rotation through the merchant CLI (the running server’s admin API): the old token’s connections end within 2 s, another merchant’s go on', async () => {
    env = await environment(kind, databases);
    server = await startServerProcess(env);
    const leaky = credentialsFrom((await cli(env, 'create', '--name', 'Leaky')).json);
    const other = credentialsFrom((await cli(env, 'create', '--name', 'Other')).json);
    const ofLeaky = await follow(server, leaky.publicToken);
    const ofOther = await follow(server, other.publicToken);

    const rotated = await rotate(env, leaky.companyId);
    expect(rotated.via).toContain('through the running server');
    await until(ofLeaky.ended, WITHIN_MS, 'the old token’s connections to end');
    expectRevoked(ofLeaky);
    await stillFollowing(ofOther, other.publicToken, server);

    // REST refuses the old token at once (its cached lookup went with the rotation); the new one works, and so do
    // live connections opened with it. The old token cannot reconnect.
    expect((await createInvoice(server, leaky.publicToken)).status).toBe(401);
    const again = await follow(server, rotated.publicToken);
    const refused = liveSocket(server.url, { token: leaky.publicToken });
    expect(await refused.accepted).toBe(4403);
    again.socket.close();
    again.stream.close();

    // The rotation is an event for the service's processes only: not in the merchant's feed, no webhook.
    const feed = await server.request('GET', '/api/company/events?limit=500', { token: rotated.publicToken });
    expect(feed.status).toBe(200);
    const types = (feed.body.events as { type: string }[]).map((e) => e.type);
    expect(types).toContain('invoice.created');
    expect(types.filter((t) => !t.startsWith('invoice.'))).toEqual([]);
  });

  // Only PostgreSQL lets a CLI open the database while a server holds it (PGlite: one process).
  if (kind === 'postgres') it('rotation by the CLI on the database itself (no server in between) ends them as well', async () => {
    const shop = credentialsFrom((await cli(env, 'create', '--name', 'Shop')).json);
    const other = credentialsFrom((await cli(env, 'create', '--name', 'Other shop')).json);
    // With a webhook URL set, the rotation is still never pushed.
    const hooked = await server.request('PUT', '/api/company/settings/webhook-url', { token: shop.publicToken, json: { webHookUrl: 'https://merchant.example/hooks' } });
    expect(hooked.status, hooked.text).toBe(200);
    const ofShop = await follow(server, shop.publicToken);
    const ofOther = await follow(server, other.publicToken);
    // The CLI has no event bus: its transaction itself signals every process listening on the database.
    const listener = new pg.Client({ connectionString: env['DATABASE_URL']! });
    await listener.connect();
    let signals = 0;
    listener.on('notification', (n) => void (n.channel === EVENTS_CHANNEL && signals++));
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
    // A DATA_DIR without the server's admin state: the CLI opens the database itself.
    const rotated = await rotate({ DATA_DIR: tempDir('payrail-cli-'), DATABASE_URL: env['DATABASE_URL']! }, shop.companyId);
    expect(rotated.via).toContain('opened directly');
    await until(() => signals > 0, WITHIN_MS, 'the rotation’s signal');
    await until(ofShop.ended, WITHIN_MS, 'the old token’s connections to end');
    expectRevoked(ofShop);
    await stillFollowing(ofOther, other.publicToken, server);
    expect((await createInvoice(server, shop.publicToken)).status).toBe(401);

    // The internal event: recorded, no delivery queued for it, not redeliverable by the merchant.
    const { rows } = await listener.query<{ id: string; deliveries: number }>(
      `SELECT e."id", (SELECT count(*)::int FROM "WebhookDelivery" d WHERE d."eventId" = e."id") AS "deliveries"
       FROM "Event" e WHERE e."companyId" = $1 AND e."type" = 'company.credentials_changed'`,
      [shop.companyId],
    );
    await listener.end();
    expect(rows).toEqual([{ id: expect.any(String), deliveries: 0 }]);
    const redeliver = await server.request('POST', `/api/company/webhooks/events/${rows[0]!.id}/redeliver`, { token: rotated.publicToken });
    expect(redeliver.status).toBe(404);
  });
});

const redisUrl = inject('redisUrl');

describe.runIf(redisUrl && DATABASES.includes('postgres'))('a rotated token ends its live connections on every instance (PostgreSQL + Redis)', { timeout: 180_000 }, () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await stopAllChildren();
    await database?.drop();
  });

  it('rotated through one instance’s admin API or by the CLI on the database: the connections on the other end within 2 s, and REST there refuses the token at once', async () => {
    database = await freshDatabase('postgres');
    const db = await openDatabase({ url: database.url, migrate: false, poolSize: 1 });
    const [first, second, third] = [await createCompany(db.prisma, { name: 'First' }), await createCompany(db.prisma, { name: 'Second' }), await createCompany(db.prisma, { name: 'Third' })].map(credentialsFrom) as [Credentials, Credentials, Credentials];
    await db.close();
    // Polls far apart: within 2 s only the rotation's signal (NOTIFY, then the relay's batch over Redis) can do it.
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl!, EVENT_POLL_MS: '10000' };
    const dirs = { a: tempDir('payrail-a-'), b: tempDir('payrail-b-') };
    const b = await startServerProcess({ ...env, DATA_DIR: dirs.b });
    const a = await startServerProcess({ ...env, DATA_DIR: dirs.a });

    // First follows on A (its token also in A's lookup cache); rotated through B's admin API.
    const firstOnA = await follow(a, first.publicToken, b);
    const thirdOnA = await follow(a, third.publicToken, b);
    expect((await createInvoice(a, first.publicToken)).status).toBe(201);
    const rotated = await rotate({ DATA_DIR: dirs.b, DATABASE_URL: database.url }, first.companyId);
    expect(rotated.via).toContain(`through the running server, pid ${b.proc.child.pid}`);
    await until(firstOnA.ended, WITHIN_MS, 'the connections on A to end');
    expectRevoked(firstOnA);
    expect((await createInvoice(a, first.publicToken)).status).toBe(401);
    expect((await createInvoice(a, rotated.publicToken)).status).toBe(201);
    await stillFollowing(thirdOnA, third.publicToken, b);

    // Second follows on both; rotated by the CLI on the database, with no server in between.
    const secondOnA = await follow(a, second.publicToken, b);
    const secondOnB = await follow(b, second.publicToken, a);
    const direct = await rotate({ DATA_DIR: tempDir('payrail-cli-'), DATABASE_URL: database.url }, second.companyId);
    expect(direct.via).toContain('opened directly');
    await until(() => secondOnA.ended() && secondOnB.ended(), WITHIN_MS, 'the connections on A and B to end');
    expectRevoked(secondOnA);
    expectRevoked(secondOnB);
    expect((await createInvoice(a, second.publicToken)).status).toBe(401);
    expect((await createInvoice(b, second.publicToken)).status).toBe(401);
    await stillFollowing(thirdOnA, third.publicToken, a);
  });
});
