// The event bus publishes every committed event once, never a rolled-back one, in commit-safe order, and reaches
// other processes on the same database.
import { afterAll, describe, expect, it } from 'vitest';
import { EventBus, type BusMessage } from '../../src/core/bus.ts';
import { recordEvent } from '../../src/core/events.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer } from '../support/server.ts';

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

const testEvent = (companyId: string, id: string) => ({ type: 'test.thing', companyId, subject: { type: 'thing', id }, payload: { id, z: 1, a: 2 } });

/** A server and what its bus published since the last listen(). */
function useBus(kind: (typeof DATABASES)[number]) {
  const server = useServer(kind);
  const received: BusMessage[] = [];
  let unsubscribe = () => {};
  afterAll(() => unsubscribe());
  const listen = () => {
    received.length = 0;
    unsubscribe();
    unsubscribe = server.app.platform.bus.subscribe((m) => received.push(m));
  };
  return { server, received, listen };
}

describe.each(DATABASES)('event bus on %s', (kind) => {
  const { server, received, listen } = useBus(kind);

  it('publishes a committed event once, typed, with its payload as written', async () => {
    listen();
    const m = await server.merchant();
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
    await until(() => received.some((r) => r.subject.id === created.body.id));
    await new Promise((r) => setTimeout(r, 100));
    const mine = received.filter((r) => r.subject.id === created.body.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ type: 'invoice.created', companyId: m.companyId, subject: { type: 'invoice', id: created.body.id } });
    expect(JSON.stringify(mine[0]!.payload)).toBe(JSON.stringify({ invoiceId: created.body.id, status: 'created', message: 'Invoice created' }));
    expect(typeof mine[0]!.seq).toBe('bigint');
  });

  it('never publishes an event whose transaction rolled back', async () => {
    listen();
    const m = await server.merchant();
    const { db, bus } = server.app.platform;
    await expect(
      db.$transaction(async (tx) => {
        await recordEvent(tx, testEvent(m.companyId, 'rolled-back'));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await db.$transaction((tx) => recordEvent(tx, testEvent(m.companyId, 'kept')));
    bus.committed();
    await until(() => received.some((r) => r.subject.id === 'kept'));
    expect(received.map((r) => r.subject.id)).not.toContain('rolled-back');
    // Key order of the payload is the writer's (the webhook body is this text).
    expect(JSON.stringify(received.find((r) => r.subject.id === 'kept')!.payload)).toBe('{"id":"kept","z":1,"a":2}');
  });

});

// Concurrent transactions and other processes exist only on PostgreSQL (an embedded database has one of each).
describe.each(DATABASES.filter((k) => k === 'postgres'))('event bus across transactions and processes on %s', (kind) => {
  const { server, received, listen } = useBus(kind);

  it('does not skip an event that commits after a later one (lower seq), and keeps their order', async () => {
    listen();
    const m = await server.merchant();
    const { db, bus } = server.app.platform;
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let firstWritten = () => {};
    const written = new Promise<void>((r) => (firstWritten = r));
    const slow = db.$transaction(async (tx) => {
      await recordEvent(tx, testEvent(m.companyId, 'slow'));
      firstWritten();
      await held;
    });
    await written;
    await db.$transaction((tx) => recordEvent(tx, testEvent(m.companyId, 'fast')));
    bus.committed();
    // The fast one is committed but waits behind the open transaction that may still commit an earlier event.
    await new Promise((r) => setTimeout(r, 300));
    expect(received.map((r) => r.subject.id)).toEqual([]);
    release();
    await slow;
    bus.committed();
    await until(() => received.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(received.map((r) => r.subject.id)).toEqual(['slow', 'fast']);
    expect(received[0]!.seq < received[1]!.seq).toBe(true);
  });

  it('reaches another process on the same database through LISTEN/NOTIFY, not its poll', async () => {
    const other = await openDatabase({ url: server.app.config.databaseUrl, migrate: false, poolSize: 2 });
    const otherBus = new EventBus({ db: other.prisma, notifications: other.notifications, logger: createLogger('silent') }, { pollMs: 60_000 });
    const seen: BusMessage[] = [];
    otherBus.subscribe((msg) => seen.push(msg));
    await otherBus.start();
    try {
      const m = await server.merchant();
      const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
      await until(() => seen.some((s) => s.subject.id === created.body.id), 3000);
      expect(seen.filter((s) => s.subject.id === created.body.id).map((s) => s.type)).toEqual(['invoice.created']);
    } finally {
      await otherBus.stop();
      await other.close();
    }
  });
});
