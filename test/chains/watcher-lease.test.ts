// Two watchers of one network, as two processes would run them on one PostgreSQL database: a scan longer than the
// lease keeps it (renewed while it runs), so the other never scans at the same time and never signs sends twice.
// Every wait is on a condition: the first scan running, the second watcher's lease checks, its first scan.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { Watcher, type Scanner } from '../../src/chains/watch.ts';
import { CursorLease } from '../../src/chains/store.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';

// Renewed every third of it: a pause of a whole lease (a loaded machine) would be needed to lose it.
const LEASE_MS = 1_000;

describe.runIf(DATABASES.includes('postgres'))('the watcher lease on PostgreSQL', () => {
  let test: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    test = await freshDatabase('postgres');
    db = await openDatabase({ url: test.url, role: 'test' });
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  it('is renewed during a scan that outlasts it: the second watcher keeps finding it held, then takes over once the first stops', async () => {
    const running: string[] = [];
    const scans: string[] = [];
    let overlapped = false;
    // The first watcher's first scan lasts until the test ends it: long past the lease, as a backlog would.
    let endLongScan!: () => void;
    const longScan = new Promise<void>((resolve) => (endLongScan = resolve));
    const scanner = (name: string): Scanner<{ n: number }> => ({
      network: 'ethereum',
      initialState: async () => ({ n: 0 }),
      async scan(state) {
        if (running.length > 0) overlapped = true;
        running.push(name);
        scans.push(name);
        if (name === 'first' && scans.length === 1) await longScan;
        running.splice(running.indexOf(name), 1);
        return { n: state.n + 1 };
      },
    });
    const logger = createLogger('silent');
    const first = new Watcher(scanner('first'), { db: db.prisma, logger }, 20, LEASE_MS);
    const second = new Watcher(scanner('second'), { db: db.prisma, logger }, 20, LEASE_MS);
    first.start();
    await eventually(async () => running.includes('first'), Boolean);
    const scanStarted = Date.now();
    second.start();
    // The second watcher checks the lease at every poll: seen checking it three leases into the first scan, it found
    // it held each time (renewed), or it would have scanned.
    await eventually(async () => second.health.lastOkAt?.getTime() ?? 0, (at) => at > scanStarted + LEASE_MS * 3);
    expect(second.health.scanning).toBe(false);
    expect(scans).toEqual(['first']);
    endLongScan();
    await first.stop();
    await eventually(async () => scans.includes('second'), Boolean);
    await second.stop();
    expect(overlapped).toBe(false);
    const cursor = await db.prisma.chainCursor.findUniqueOrThrow({ where: { network: 'ethereum' } });
    expect((cursor.state as { n: number }).n).toBe(scans.length);
  });

  it('a watcher whose lease was taken over can neither save its state nor renew (fenced by the generation)', async () => {
    const stale = new CursorLease(db.prisma, 'tron', 200);
    const next = new CursorLease(db.prisma, 'tron', 60_000);
    expect(await stale.hold(async () => ({ n: 0 }))).toEqual({ n: 0 });
    expect(await next.hold(async () => ({ n: 0 }))).toBeNull();
    await eventually(async () => next.hold(async () => ({ n: 0 })), (state) => state !== null);
    // The stale watcher scanned on, unaware: its save and renewal do nothing; the new holder's save goes through.
    expect(await stale.save({ n: 99 })).toBe(false);
    expect(await stale.renew()).toBe(false);
    expect(await next.save({ n: 1 })).toBe(true);
    const cursor = await db.prisma.chainCursor.findUniqueOrThrow({ where: { network: 'tron' } });
    expect(cursor.state).toEqual({ n: 1 });
    expect(cursor.generation).toBe(2);
    await next.release();
  });
});
