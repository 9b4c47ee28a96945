// The live layer's pure parts: cursors in and out, and the bound on what a slow subscriber may leave unread.
import { describe, expect, it } from 'vitest';
import type { BusListener, BusMessage } from '../../src/core/bus.ts';
import type { Db } from '../../src/db/client.ts';
import { encodeLiveCursor, liveEvents, liveSubscriptionCount, MAX_UNREAD, parseLiveCursor } from '../../src/graphql/live.ts';

const message = (seq: number): BusMessage => ({
  seq: BigInt(seq),
  txid: 10n,
  eventId: `e${seq}`,
  type: 'invoice.created',
  companyId: 'c1',
  subject: { type: 'invoice', id: `i${seq}` },
  payload: {},
  createdAt: new Date(0),
});

/** A bus whose messages the test publishes by hand. */
function handBus() {
  const listeners = new Set<BusListener>();
  const bus = {
    subscribe(listener: BusListener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    position: () => ({ txid: 9n, seq: 0n }),
    publish: (m: BusMessage) => listeners.forEach((l) => l(m)),
    /** Subscriptions following it. */
    get size() {
      return liveSubscriptionCount(bus);
    },
  };
  return bus;
}

describe('live cursors', () => {
  it('round-trip and refuse anything else', () => {
    expect(parseLiveCursor(encodeLiveCursor({ txid: 123n, seq: 9223372036854775807n }))).toEqual({ txid: 123n, seq: 9223372036854775807n });
    expect(parseLiveCursor(null)).toBeNull();
    expect(parseLiveCursor(undefined)).toBeNull();
    for (const bad of ['', '1', '1.', '.1', '1.2.3', '-1.2', '1.-2', 'a.b', '1e3.1', ' 1.2', '1.2 ', '9223372036854775808.1', '1.9223372036854775808', '1'.repeat(20) + '.1', '1.2\u0000']) {
      expect(() => parseLiveCursor(bad), bad).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    }
  });
});

describe('a slow subscriber', () => {
  it('gets every message in order up to the bound, then an error telling it to resume, and lets go of the bus', async () => {
    const bus = handBus();
    const iterator = liveEvents({ bus, db: {} as Db }, { subjectType: 'invoice', companyId: 'c1' }, null)[Symbol.asyncIterator]();
    expect(bus.size).toBe(1);
    // The first message reaching the reader says the subscription is past its start: the rest go to its buffer.
    bus.publish(message(1));
    const first = await iterator.next();
    for (let seq = 2; seq <= MAX_UNREAD + 5; seq++) bus.publish(message(seq));
    // Another company's message never counts.
    bus.publish({ ...message(99_999), companyId: 'c2' });
    const received: bigint[] = [];
    let outcome: unknown = null;
    try {
      let next = first;
      while (!next.done) {
        received.push((next.value as { message: BusMessage }).message.seq);
        next = await iterator.next();
      }
    } catch (e) {
      outcome = e;
    }
    // The first went to the waiting reader; MAX_UNREAD more waited; the next one ended the subscription.
    expect(received).toEqual(Array.from({ length: MAX_UNREAD + 1 }, (_, i) => BigInt(i + 1)));
    expect(outcome).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(String((outcome as Error).message)).toContain('after');
    expect(bus.size).toBe(0);
  });

  it('a reader that keeps up is never cut off', async () => {
    const bus = handBus();
    const iterator = liveEvents({ bus, db: {} as Db }, { subjectType: 'invoice' }, null)[Symbol.asyncIterator]();
    let next = iterator.next();
    for (let seq = 1; seq <= MAX_UNREAD * 3; seq++) {
      bus.publish(message(seq));
      const got = await next;
      expect((got.value as { message: BusMessage }).message.seq).toBe(BigInt(seq));
      next = iterator.next();
    }
    await iterator.return?.();
  });
});

describe('a subscriber that resumes from a cursor', () => {
  /** A database with a long history (50 full pages). Counts the pages read. */
  function endlessHistory() {
    const pages = { read: 0 };
    let seq = 0;
    const db = {
      $queryRaw: async (strings: TemplateStringsArray) => {
        const sql = strings.join('?');
        if (sql.includes('pg_snapshot_xmin')) return [{ horizon: 10n ** 12n }];
        if (sql.includes('count(*)')) return [{ n: 100 }];
        if (++pages.read > 50) return [];
        return Array.from({ length: 200 }, () => {
          seq++;
          return { id: `e${seq}`, seq: BigInt(seq), txid: 5n, type: 'invoice.created', companyId: 'c1', subjectType: 'invoice', subjectId: `i${seq}`, payload: {}, createdAt: new Date(0) };
        });
      },
    } as unknown as Db;
    return { db, pages };
  }

  it('stops reading the history once it leaves', async () => {
    const bus = { ...handBus(), position: () => ({ txid: 10n ** 9n, seq: 0n }) };
    const subscribe = () => {
      const { db, pages } = endlessHistory();
      return { pages, iterator: liveEvents({ bus, db }, { subjectType: 'invoice', companyId: 'c1' }, { txid: 1n, seq: 0n })[Symbol.asyncIterator]() };
    };
    // Two subscribers at the same point: one leaves, the other keeps reading.
    const leaving = subscribe();
    const staying = subscribe();
    expect((await leaving.iterator.next()).done).toBe(false);
    expect((await staying.iterator.next()).done).toBe(false);
    await leaving.iterator.return?.();
    const readWhenLeft = leaving.pages.read;
    expect(readWhenLeft).toBeLessThanOrEqual(2);
    // The one that stays reads on: two more pages once it has read what it holds (the positive signal that the
    // history reading went on for whoever still reads).
    for (let read = 1; staying.pages.read < readWhenLeft + 2; read++) {
      expect((await staying.iterator.next()).done).toBe(false);
      if (read > 1_000) throw new Error('the staying subscriber stopped reading its history');
    }
    expect(leaving.pages.read).toBe(readWhenLeft);
    await staying.iterator.return?.();
  });
});
