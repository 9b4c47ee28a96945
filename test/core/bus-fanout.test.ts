// The event bus across instances through a fan-out: one relay reads the Event table and publishes batches, every bus
// delivers each committed event once and in order, a lost batch or a silent fan-out is made good from the table, and
// another process takes over when the relay stops. The in-memory fan-out below stands in for Redis where a test must
// lose or withhold batches; the last test runs the same over the real Redis.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { EventBus, type BusBatch, type BusFanout, type BusMessage } from '../../src/core/bus.ts';
import { recordEvent } from '../../src/core/events.ts';
import { redisFanout } from '../../src/core/redis-fanout.ts';
import { inProcessNotifications } from '../../src/db/notifications.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Redis-like pub/sub in memory: asynchronous, in order; a receiver can lose batches or hear nothing at all. */
class MemoryHub {
  private readonly receivers = new Set<Endpoint>();
  endpoint(): Endpoint {
    const e = new Endpoint(this);
    return e;
  }
  publish(batch: BusBatch): void {
    for (const r of this.receivers) r.receive(batch);
  }
  join(e: Endpoint): void {
    this.receivers.add(e);
  }
  leave(e: Endpoint): void {
    this.receivers.delete(e);
  }
}

class Endpoint implements BusFanout {
  dropNext = 0;
  deaf = false;
  published = 0;
  private onBatch: ((b: BusBatch) => void) | null = null;
  constructor(private readonly hub: MemoryHub) {}
  publish(batch: BusBatch): void {
    this.published += batch.messages.length;
    this.hub.publish(batch);
  }
  async subscribe(onBatch: (b: BusBatch) => void): Promise<void> {
    this.onBatch = onBatch;
    this.hub.join(this);
  }
  receive(batch: BusBatch): void {
    if (this.deaf) return;
    if (this.dropNext > 0) {
      this.dropNext--;
      return;
    }
    setImmediate(() => this.onBatch?.(batch));
  }
  async close(): Promise<void> {
    this.hub.leave(this);
  }
}

const OPTIONS = { pollMs: 50, relayLeaseMs: 300 };

describe.each(DATABASES)('event bus fan-out on %s', (kind) => {
  const server = useServer(kind);
  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.stop()));
  });
  const notifications = inProcessNotifications();

  async function bus(fanout: BusFanout): Promise<{ bus: EventBus; got: BusMessage[] }> {
    const b = new EventBus({ db: server.app.platform.db, notifications, logger: createLogger('silent'), fanout }, OPTIONS);
    const got: BusMessage[] = [];
    b.subscribe((m) => got.push(m));
    await b.start();
    buses.push(b);
    return { bus: b, got };
  }

  /** Commits `n` events of a fresh subject, one transaction each, and answers their ids in commit order. */
  async function commit(n: number, via: EventBus): Promise<string[]> {
    const m = await server.merchant();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      await server.app.platform.db.$transaction((tx) => recordEvent(tx, { type: 'test.thing', companyId: m.companyId, subject: { type: 'thing', id }, payload: { i } }));
      via.committed();
      ids.push(id);
    }
    return ids;
  }

  const idsOf = (got: BusMessage[], wanted: string[]) => got.map((g) => g.subject.id!).filter((id) => wanted.includes(id));

  it('one bus relays; every bus delivers each committed event once, in commit order', async () => {
    const hub = new MemoryHub();
    const a = await bus(hub.endpoint());
    const b = await bus(hub.endpoint());
    await until(() => a.bus.relaying || b.bus.relaying);
    expect([a.bus.relaying, b.bus.relaying].filter(Boolean)).toHaveLength(1);
    const ids = await commit(20, b.bus);
    await until(() => idsOf(a.got, ids).length === 20 && idsOf(b.got, ids).length === 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(idsOf(a.got, ids)).toEqual(ids);
    expect(idsOf(b.got, ids)).toEqual(ids);
  });

  it('a lost batch is read from the table before the next one is delivered', async () => {
    const hub = new MemoryHub();
    const relayEnd = hub.endpoint();
    const a = await bus(relayEnd);
    await until(() => a.bus.relaying);
    const lossy = hub.endpoint();
    const b = await bus(lossy);
    const first = await commit(3, a.bus);
    await until(() => idsOf(b.got, first).length === 3);
    // Whatever batches carry the next events, B loses the first two (a dropped Redis connection, say).
    lossy.dropNext = 2;
    const next = await commit(10, a.bus);
    await until(() => idsOf(b.got, next).length === 10);
    await new Promise((r) => setTimeout(r, 200));
    expect(idsOf(b.got, [...first, ...next])).toEqual([...first, ...next]);
    expect(lossy.dropNext).toBe(0);
  });

  it('when the relay stops, another bus takes over and nothing is lost', async () => {
    const hub = new MemoryHub();
    const a = await bus(hub.endpoint());
    await until(() => a.bus.relaying);
    const b = await bus(hub.endpoint());
    expect(b.bus.relaying).toBe(false);
    const before = await commit(3, b.bus);
    await until(() => idsOf(b.got, before).length === 3);
    await a.bus.stop();
    // Committed while no bus relays: the new relay starts at the present, B reads the gap from the table.
    const between = await commit(3, b.bus);
    await until(() => b.bus.relaying);
    const after = await commit(3, b.bus);
    await until(() => idsOf(b.got, after).length === 3);
    expect(idsOf(b.got, [...before, ...between, ...after])).toEqual([...before, ...between, ...after]);
  });

  it('a relay whose renewals stop (a stalled process) stops publishing within its lease; the bus taking over serves all', async () => {
    const hub = new MemoryHub();
    const relayEnd = hub.endpoint();
    const a = await bus(relayEnd);
    await until(() => a.bus.relaying);
    const b = await bus(hub.endpoint());
    // A's beats stop (as when its process stalls); it still holds the lease as far as it knows and is woken by its
    // commits.
    clearInterval((a.bus as unknown as { poller: NodeJS.Timeout }).poller);
    const stalledAt = Date.now();
    await until(() => b.bus.relaying);
    // Its lease ran out before B could take it: it no longer counts itself a relay.
    expect(a.bus.relaying).toBe(false);
    await new Promise((r) => setTimeout(r, Math.max(0, stalledAt + OPTIONS.relayLeaseMs - Date.now())));
    const publishedByA = relayEnd.published;
    const ids = await commit(5, a.bus);
    await until(() => idsOf(a.got, ids).length === 5 && idsOf(b.got, ids).length === 5);
    await new Promise((r) => setTimeout(r, 200));
    expect(relayEnd.published, 'published by the stalled relay after its lease').toBe(publishedByA);
    expect(idsOf(a.got, ids)).toEqual(ids);
    expect(idsOf(b.got, ids)).toEqual(ids);
  });

  it('a bus that hears no batches reads the table itself meanwhile', async () => {
    const hub = new MemoryHub();
    const a = await bus(hub.endpoint());
    await until(() => a.bus.relaying);
    const deafEnd = hub.endpoint();
    deafEnd.deaf = true;
    const b = await bus(deafEnd);
    const ids = await commit(5, a.bus);
    await until(() => idsOf(b.got, ids).length === 5);
    expect(idsOf(b.got, ids)).toEqual(ids);
    // The batches come again: no event twice.
    deafEnd.deaf = false;
    const more = await commit(2, a.bus);
    await until(() => idsOf(b.got, more).length === 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(idsOf(b.got, [...ids, ...more])).toEqual([...ids, ...more]);
  });
});

const redisUrl = inject('redisUrl');

describe.runIf(redisUrl && DATABASES.includes('postgres'))('event bus fan-out through Redis on postgres', () => {
  const server = useServer('postgres');
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('two buses on one database: one relays through Redis, both deliver every event once, in order', async () => {
    const channel = `payrail:test:${randomUUID()}`;
    const received: BusMessage[][] = [];
    const buses: EventBus[] = [];
    for (let i = 0; i < 2; i++) {
      const fanout = await redisFanout(redisUrl!, channel, createLogger('silent'));
      const b = new EventBus({ db: server.app.platform.db, notifications: server.app.db.notifications, logger: createLogger('silent'), fanout }, OPTIONS);
      const got: BusMessage[] = [];
      b.subscribe((m) => got.push(m));
      await b.start();
      stops.push(async () => {
        await b.stop();
        await fanout.close();
      });
      buses.push(b);
      received.push(got);
    }
    await until(() => buses.some((b) => b.relaying));
    expect(buses.filter((b) => b.relaying)).toHaveLength(1);
    const m = await server.merchant();
    const ids: string[] = Array.from({ length: 30 }, () => randomUUID());
    for (const id of ids) {
      await server.app.platform.db.$transaction((tx) => recordEvent(tx, { type: 'test.thing', companyId: m.companyId, subject: { type: 'thing', id }, payload: { id } }));
      buses[1]!.committed();
    }
    const mine = (got: BusMessage[]) => got.map((g) => g.subject.id!).filter((id) => ids.includes(id));
    await until(() => received.every((got) => mine(got).length === ids.length));
    await new Promise((r) => setTimeout(r, 200));
    for (const got of received) expect(mine(got)).toEqual(ids);
    // The messages crossed Redis intact: bigint positions, dates and payloads.
    const sample = received[0]!.find((g) => g.subject.id === ids[0])!;
    expect(typeof sample.txid).toBe('bigint');
    expect(sample.createdAt).toBeInstanceOf(Date);
    expect(sample.payload).toEqual({ id: ids[0] });
  });
});
