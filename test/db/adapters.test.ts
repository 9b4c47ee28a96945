// The database adapters tell the truth about what committed: a transaction whose COMMIT fails rejects (it used to
// resolve on PGlite: pglite-prisma-adapter dropped the error), a rolled-back one leaves nothing, and a failing
// script rejects instead of being reported as applied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(DATABASES)('transactions through the adapter on %s', (kind) => {
  let database: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await freshDatabase(kind);
    db = await openDatabase({ url: database.url, poolSize: 2, role: 'test' });
    // A deferred foreign key is checked only at COMMIT: the one way to make COMMIT itself fail.
    await db.prisma.$executeRawUnsafe(`CREATE TABLE "_p" (id int PRIMARY KEY)`);
    await db.prisma.$executeRawUnsafe(`CREATE TABLE "_c" (id int PRIMARY KEY, pid int REFERENCES "_p"(id) DEFERRABLE INITIALLY DEFERRED)`);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const count = async () => Number((await db.prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "_c"`))[0]!.n);

  it('a COMMIT that fails rejects the transaction and nothing is kept', async () => {
    await expect(db.prisma.$transaction(async (tx) => tx.$executeRawUnsafe(`INSERT INTO "_c" VALUES (1, 999)`))).rejects.toThrow(/foreign ?key/i);
    expect(await count()).toBe(0);
  });

  it('a transaction that commits keeps its rows; one that throws keeps none; the connection stays usable', async () => {
    await db.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`INSERT INTO "_p" VALUES (1)`);
      await tx.$executeRawUnsafe(`INSERT INTO "_c" VALUES (1, 1)`);
    });
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`INSERT INTO "_c" VALUES (2, 1)`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await count()).toBe(1);
  });
});
