// Two watchers of one network, as two processes would run them on one PostgreSQL database: a scan longer than the
// lease keeps it (renewed while it runs), so the other never scans at the same time and never signs sends twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { Watcher, type Scanner } from '../../src/chains/watch.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { sleep } from '../support/processes.ts';

const LEASE_MS = 300;

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

  it('is renewed during a scan four times as long as the lease: the second watcher waits, then takes over once the first stops', async () => {
    const running: string[] = [];
    const scans: string[] = [];
    let overlapped = false;
    const scanner = (name: string, ms: number): Scanner<{ n: number }> => ({
      network: 'ethereum',
      initialState: async () => ({ n: 0 }),
      async scan(state) {
        if (running.length > 0) overlapped = true;
        running.push(name);
        scans.push(name);
        await sleep(ms);
        running.splice(running.indexOf(name), 1);
        return { n: state.n + 1 };
      },
    });
    const logger = createLogger('silent');
    const first = new Watcher(scanner('first', LEASE_MS * 4), { db: db.prisma, logger }, 20, LEASE_MS);
    const second = new Watcher(scanner('second', 10), { db: db.prisma, logger }, 20, LEASE_MS);
    first.start();
    await sleep(100);
    second.start();
    await sleep(LEASE_MS * 5);
    expect(second.health.scanning).toBe(false);
    expect(scans.every((s) => s === 'first')).toBe(true);
    await first.stop();
    await sleep(LEASE_MS);
    await second.stop();
    expect(scans).toContain('second');
    expect(overlapped).toBe(false);
    const cursor = await db.prisma.chainCursor.findUniqueOrThrow({ where: { network: 'ethereum' } });
    expect((cursor.state as { n: number }).n).toBe(scans.length);
  });
});
