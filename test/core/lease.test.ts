// The claim/lease mechanism of src/core/lease.ts on both databases, on tables of its own (the mechanism is generic;
// the protocols built on it have their own tests): claim, renew, release, take-over after expiry, fencing of the
// stale holder, and two claimers at once never both holding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../generated/prisma/client.ts';
import { Leases, RowClaims, type Claim } from '../../src/core/lease.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';

const LANES = { table: 'TestLane', key: 'name', keyType: 'text', owner: 'owner', ownerType: 'uuid', until: 'leaseUntil', generation: 'generation', rows: 'created' } as const;
const JOBS = { table: 'TestJob', key: 'id', keyType: 'uuid', until: 'claimedUntil', generation: 'attempt' } as const;

describe.each(DATABASES)('leases on %s', (kind) => {
  let test: TestDatabase;
  let db: Database;
  // A second connection pool, as a second process would have (PostgreSQL); PGlite has one connection.
  let other: Database;

  beforeAll(async () => {
    test = await freshDatabase(kind);
    db = await openDatabase({ url: test.url, role: 'test' });
    other = kind === 'postgres' ? await openDatabase({ url: test.url, role: 'test' }) : db;
    await db.prisma.$executeRawUnsafe(
      `CREATE TABLE "TestLane" ("name" text PRIMARY KEY, "owner" uuid, "leaseUntil" timestamptz(3), "generation" int NOT NULL DEFAULT 0, "state" int NOT NULL DEFAULT 0)`,
    );
    await db.prisma.$executeRawUnsafe(
      `CREATE TABLE "TestJob" ("id" uuid PRIMARY KEY, "n" int NOT NULL, "done" boolean NOT NULL DEFAULT false, "claimedUntil" timestamptz(3), "attempt" int NOT NULL DEFAULT 0)`,
    );
  });
  afterAll(async () => {
    if (other !== db) await other?.close();
    await db?.close();
    await test?.drop();
  });

  describe('named leases', () => {
    it('claim, renew, release: one holder at a time; a handed-back lease is free at once', async () => {
      const a = new Leases(LANES, 60_000);
      const b = new Leases(LANES, 60_000);
      const held = await a.acquire(db.prisma, 'claim');
      expect(held).toMatchObject({ key: 'claim', owner: a.owner, generation: 1 });
      expect(await b.acquire(db.prisma, 'claim')).toBeNull();
      // Taking it again is a renewal: same generation, later or equal deadline.
      const again = await a.acquire(db.prisma, 'claim');
      expect(again!.generation).toBe(1);
      const renewed = await a.renew(db.prisma, held!);
      expect(renewed!.until.getTime()).toBeGreaterThanOrEqual(held!.until.getTime());
      expect(await a.holder(db.prisma, 'claim')).toEqual({ owner: a.owner, generation: 1 });
      expect(await a.release(db.prisma, renewed!)).toBe(true);
      expect(await a.holder(db.prisma, 'claim')).toBeNull();
      // A released lease is free for anyone, with a new generation.
      expect(await b.acquire(db.prisma, 'claim')).toMatchObject({ owner: b.owner, generation: 2 });
    });

    it('an expired lease is taken over with a new generation; the stale holder can neither renew, release nor write', async () => {
      // On a clock of the test's: the lease ends exactly when the test says.
      let now = new Date('2030-01-01T00:00:00Z');
      const stale = new Leases(LANES, 1_000, undefined, () => now);
      const next = new Leases(LANES, 60_000, undefined, () => now);
      const old = (await stale.acquire(db.prisma, 'expiry'))!;
      now = new Date('2030-01-01T00:00:00.999Z');
      expect(await next.acquire(db.prisma, 'expiry')).toBeNull();
      now = new Date('2030-01-01T00:00:01.001Z');
      const taken = (await next.acquire(db.prisma, 'expiry'))!;
      expect(taken.generation).toBe(old.generation + 1);
      // The stale holder believes nothing changed; every write it guards with its fence does nothing.
      expect(await stale.renew(db.prisma, old)).toBeNull();
      expect(await db.prisma.$executeRaw`UPDATE "TestLane" l SET "state" = 1 WHERE ${stale.fence(old)}`).toBe(0);
      expect(await stale.release(db.prisma, old)).toBe(false);
      // The new holder's writes go through.
      expect(await db.prisma.$executeRaw`UPDATE "TestLane" l SET "state" = 2 WHERE ${next.fence(taken)}`).toBe(1);
      expect(await next.holder(db.prisma, 'expiry')).toEqual({ owner: next.owner, generation: taken.generation });
      // Even the same holder coming back after losing it gets a new generation: its old token stays dead.
      await next.release(db.prisma, taken);
      const back = (await stale.acquire(db.prisma, 'expiry'))!;
      expect(back.generation).toBe(taken.generation + 1);
      expect(await db.prisma.$executeRaw`UPDATE "TestLane" l SET "state" = 3 WHERE ${stale.fence(old)}`).toBe(0);
    });

    it('many holders racing for one lease: exactly one gets it', async () => {
      const holders = Array.from({ length: 8 }, () => new Leases(LANES, 60_000));
      const got = await Promise.all(holders.map((h, i) => h.acquire((i % 2 ? other : db).prisma, 'race')));
      expect(got.filter(Boolean)).toHaveLength(1);
    });

    it('acquireSql takes several keys in one statement, only those free or ours', async () => {
      const a = new Leases(LANES, 60_000);
      const b = new Leases(LANES, 60_000);
      await b.acquire(db.prisma, 'bulk-2');
      const keys = Prisma.sql`SELECT unnest(${['bulk-1', 'bulk-2', 'bulk-3']}::text[]) AS "key"`;
      const rows = await db.prisma.$queryRaw<{ key: string; generation: number }[]>(a.acquireSql(keys));
      expect(rows.map((r) => r.key).sort()).toEqual(['bulk-1', 'bulk-3']);
      await db.prisma.$executeRaw(a.releaseKeysSql(['bulk-1', 'bulk-2', 'bulk-3']));
      expect(await a.holder(db.prisma, 'bulk-1')).toBeNull();
      expect(await a.holder(db.prisma, 'bulk-2')).toEqual({ owner: b.owner, generation: 1 });
    });

    it('on a table whose rows exist already (a cursor beside its state): takes only existing rows, by the same rules', async () => {
      const existing = { ...LANES, rows: 'existing' } as const;
      const a = new Leases(existing, 60_000);
      const b = new Leases(existing, 60_000);
      expect(await a.acquire(db.prisma, 'existing')).toBeNull();
      await db.prisma.$executeRaw`INSERT INTO "TestLane" ("name", "state") VALUES ('existing', 7)`;
      const held = (await a.acquire(db.prisma, 'existing'))!;
      expect(held.generation).toBe(1);
      expect(await b.acquire(db.prisma, 'existing')).toBeNull();
      expect((await a.acquire(db.prisma, 'existing'))!.generation).toBe(1);
      await a.release(db.prisma, held);
      expect((await b.acquire(db.prisma, 'existing'))!.generation).toBe(2);
      const racers = Array.from({ length: 6 }, () => new Leases(existing, 60_000));
      await db.prisma.$executeRaw`INSERT INTO "TestLane" ("name") VALUES ('existing-race')`;
      const got = await Promise.all(racers.map((h, i) => h.acquire((i % 2 ? other : db).prisma, 'existing-race')));
      expect(got.filter(Boolean)).toHaveLength(1);
    });

    it('on the migrated protocol tables (EventRelay, WebhookLane: columns altered by a migration), racing holders: one per round', async () => {
      const tables = [
        { spec: { table: 'EventRelay', key: 'id', keyType: 'text', owner: 'owner', ownerType: 'text', until: 'leaseUntil', generation: 'generation', rows: 'created' }, key: 'relay-race' },
        {
          spec: { table: 'WebhookLane', key: 'companyId', keyType: 'uuid', owner: 'owner', ownerType: 'uuid', until: 'leaseUntil', generation: 'generation', rows: 'created' },
          key: '00000000-0000-4000-8000-000000000001',
        },
      ] as const;
      for (const { spec, key } of tables) {
        for (let round = 1; round <= 5; round++) {
          const racers = Array.from({ length: 6 }, () => new Leases(spec, 60_000));
          const got = await Promise.all(racers.map((h, i) => h.acquire((i % 2 ? other : db).prisma, key)));
          const won = got.filter((g) => g !== null);
          expect(won, `${spec.table} round ${round}`).toHaveLength(1);
          expect(won[0]!.generation).toBe(round);
          const winner = racers[got.indexOf(won[0]!)]!;
          expect(await winner.holder(db.prisma, key)).toEqual({ owner: winner.owner, generation: round });
          expect(await winner.release(db.prisma, won[0]!)).toBe(true);
        }
      }
      // A handed-back row keeps a past deadline: a process of the previous release (its only rule "the deadline
      // passed", rows deleted on hand-back) takes it during a rolling deploy.
      const previous = await db.prisma.$queryRaw<{ owner: string }[]>`
        INSERT INTO "EventRelay" ("id", "owner", "leaseUntil") VALUES ('relay-race', 'previous-release', now() + interval '5 seconds')
        ON CONFLICT ("id") DO UPDATE SET "owner" = EXCLUDED."owner", "leaseUntil" = EXCLUDED."leaseUntil"
        WHERE "EventRelay"."owner" = EXCLUDED."owner" OR "EventRelay"."leaseUntil" < now()
        RETURNING "owner"`;
      expect(previous).toEqual([{ owner: 'previous-release' }]);
    });

    it('runs on a caller clock when given one (real time for the webhook worker)', async () => {
      let now = new Date('2030-01-01T00:00:00Z');
      const a = new Leases(LANES, 1_000, undefined, () => now);
      const b = new Leases(LANES, 1_000, undefined, () => now);
      const held = (await a.acquire(db.prisma, 'clock'))!;
      expect(held.until.toISOString()).toBe('2030-01-01T00:00:01.000Z');
      expect(await b.acquire(db.prisma, 'clock')).toBeNull();
      now = new Date('2030-01-01T00:00:02Z');
      expect(await b.acquire(db.prisma, 'clock')).toMatchObject({ generation: 2 });
    });
  });

  describe('row claims', () => {
    const jobs = new RowClaims(JOBS, 60_000);
    const work = { where: Prisma.sql`NOT t."done"`, orderBy: Prisma.sql`t."n"` };

    const insertJobs = async (count: number) => {
      await db.prisma.$executeRaw`DELETE FROM "TestJob"`;
      await db.prisma.$executeRaw`INSERT INTO "TestJob" ("id", "n") SELECT gen_random_uuid(), n FROM generate_series(1, ${count}::int) n`;
    };

    it('claims work rows in order, once, until handed back; renew keeps them; release frees them at once', async () => {
      await insertJobs(5);
      const first = await jobs.claim<{ n: number }>(db.prisma, { ...work, limit: 3 });
      expect(first.map((c) => c.row.n)).toEqual([1, 2, 3]);
      expect(first.every((c) => c.generation === 1)).toBe(true);
      const second = await jobs.claim<{ n: number }>(db.prisma, { ...work, limit: 3 });
      expect(second.map((c) => c.row.n)).toEqual([4, 5]);
      expect(await jobs.claim(db.prisma, { ...work, limit: 3 })).toEqual([]);
      expect((await jobs.renew(db.prisma, first)).length).toBe(3);
      // Handed back with a change of its own (here: one is done).
      expect(await jobs.release(db.prisma, first.slice(0, 1), Prisma.sql`"done" = true`)).toEqual([first[0]!.key]);
      expect(await jobs.release(db.prisma, first.slice(1))).toHaveLength(2);
      const again = await jobs.claim<{ n: number }>(db.prisma, { ...work, limit: 10 });
      expect(again.map((c) => [c.row.n, c.generation])).toEqual([
        [2, 2],
        [3, 2],
      ]);
    });

    it('an expired claim is taken over with a new attempt; the stale holder cannot renew, release or write', async () => {
      await insertJobs(1);
      let now = new Date('2030-01-01T00:00:00Z');
      const short = new RowClaims(JOBS, 1_000, () => now);
      const later = new RowClaims(JOBS, 60_000, () => now);
      const [old] = await short.claim<{ n: number }>(db.prisma, { ...work, limit: 1 });
      now = new Date('2030-01-01T00:00:00.999Z');
      expect(await later.claim(db.prisma, { ...work, limit: 1 })).toEqual([]);
      now = new Date('2030-01-01T00:00:01.001Z');
      const [taken] = await later.claim<{ n: number }>(db.prisma, { ...work, limit: 1 });
      expect(taken!.key).toBe(old!.key);
      expect(taken!.generation).toBe(old!.generation + 1);
      expect(await short.renew(db.prisma, [old!])).toEqual([]);
      expect(await short.release(db.prisma, [old!])).toEqual([]);
      expect(await db.prisma.$executeRaw`UPDATE "TestJob" t SET "done" = true WHERE ${short.fence(old!)}`).toBe(0);
      expect(await db.prisma.$executeRaw`UPDATE "TestJob" t SET "done" = true WHERE ${later.fenceAll([taken!])}`).toBe(1);
    });

    it('concurrent claimers never both hold a row (FOR UPDATE SKIP LOCKED)', async () => {
      await insertJobs(200);
      const claimers = Array.from({ length: 6 }, (_, i) => ({ q: (i % 2 ? other : db).prisma, got: [] as Claim<{ n: number }>[] }));
      await Promise.all(
        claimers.map(async (c) => {
          for (;;) {
            const batch = await jobs.claim<{ n: number }>(c.q, { ...work, limit: 7 });
            if (batch.length === 0) return;
            c.got.push(...batch);
          }
        }),
      );
      const all = claimers.flatMap((c) => c.got.map((g) => g.row.n));
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
      if (kind === 'postgres') expect(claimers.filter((c) => c.got.length > 0).length).toBeGreaterThan(1);
    });
  });
});
