// Sharded running balances (src/ledger/ledger.ts): concurrent credits take different shards without waiting,
// the balance is the sum of the shards, and debits of the merchant's available money are exact under
// concurrency: never negative, never more taken than there was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from '../../src/companies/service.ts';
import { openDatabase, transactionWithRetry, type Database, type Prisma } from '../../src/db/client.ts';
import { Money } from '../../src/domain/money.ts';
import { ACCOUNTS, InsufficientFundsError, availableBalance, debitAvailable, postJournal } from '../../src/ledger/ledger.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';

type Tx = Prisma.TransactionClient;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASES)('sharded balances on %s', { timeout: 120_000 }, (kind) => {
  let database: TestDatabase;
  let db: Database;
  let companyId: string;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    db = await openDatabase({ url: database.url, migrate: false, poolSize: 10, role: 'test' });
    companyId = (await createCompany(db.prisma, { name: 'Shards' })).companyId;
  });

  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  // Each test uses its own asset, so its balances start at zero.
  const credit = (tx: Tx, asset: string, amount: string) =>
    postJournal(tx, {
      companyId,
      asset,
      kind: 'payment',
      postings: [
        { account: ACCOUNTS.chainExternal, amount: new Money(amount).neg() },
        { account: ACCOUNTS.merchantAvailable, amount: new Money(amount) },
      ],
    });
  const debit = (tx: Tx, asset: string, amount: string) =>
    debitAvailable(tx, { companyId, asset, amount: new Money(amount), kind: 'refund', to: [{ account: ACCOUNTS.chainExternal, amount: new Money(amount) }] });
  const shards = (asset: string, account: string = ACCOUNTS.merchantAvailable) =>
    db.prisma.balance.findMany({ where: { companyId, asset, account }, orderBy: { shard: 'asc' } });
  const available = (asset: string) => db.prisma.$transaction((tx) => availableBalance(tx, companyId, asset));
  /** The ledger's own invariants (chain-records is left out: these journals have no chain transfers behind them). */
  const ledgerProblems = async () => (await verifyLedger(db.prisma)).problems.filter((p) => p.check !== 'chain-records');

  it('one transaction keeps to one shard per account: a payment and its fee move the same row', async () => {
    await db.prisma.$transaction(async (tx) => {
      await credit(tx, 'one', '10');
      await postJournal(tx, {
        companyId,
        asset: 'one',
        kind: 'fee',
        postings: [
          { account: ACCOUNTS.merchantAvailable, amount: new Money(-1) },
          { account: ACCOUNTS.platformFees, amount: new Money(1) },
        ],
      });
    });
    const rows = await shards('one');
    expect(rows.map((r) => r.amount.toFixed())).toEqual(['9']);
    expect((await available('one')).toFixed()).toBe('9');
    expect(await ledgerProblems()).toEqual([]);
  });

  /** Runs `tx` in a transaction held open until `whileOpen` has finished, then commits it. */
  async function heldOpen(tx: (tx: Tx) => Promise<unknown>, whileOpen: () => Promise<void>): Promise<void> {
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const open = db.prisma.$transaction(async (t) => {
      await tx(t);
      ready();
      await released;
    });
    await Promise.race([isReady, open]);
    try {
      await whileOpen();
    } finally {
      release();
      await open;
    }
  }
  /** Fails instead of waiting when the statement queues on another transaction's lock. */
  const noWait = (tx: Tx) => tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '2s'`);
  // Concurrent transactions exist only on PostgreSQL: the embedded database runs one at a time, so these
  // cases are not registered there (rather than reported as skipped).
  const concurrently = kind === 'postgres' ? it : () => {};

  concurrently('credits never wait for each other, nor exact checks for credits in flight', async () => {
    await heldOpen(
      (tx) => credit(tx, 'wait', '1'),
      async () => {
        await db.prisma.$transaction(async (tx) => (await noWait(tx), credit(tx, 'wait', '2')));
        // The credit in flight is not counted yet (and not waited for).
        expect((await db.prisma.$transaction(async (tx) => (await noWait(tx), availableBalance(tx, companyId, 'wait')))).toFixed()).toBe('2');
      },
    );
    expect((await shards('wait')).map((r) => r.amount.toFixed()).sort()).toEqual(['1', '2']);
    // Again with both shards existing: the held one is skipped, the other taken.
    await heldOpen(
      (tx) => credit(tx, 'wait', '4'),
      () => db.prisma.$transaction(async (tx) => (await noWait(tx), credit(tx, 'wait', '8'))),
    );
    expect((await available('wait')).toFixed()).toBe('15');
    expect((await shards('wait')).length).toBe(2);
    expect(await ledgerProblems()).toEqual([]);
  });

  concurrently('exact checks run one at a time, each after the previous debit committed', async () => {
    await db.prisma.$transaction((tx) => credit(tx, 'serial', '10'));
    let second: Promise<boolean> = Promise.resolve(false);
    let done = false;
    await heldOpen(
      async (tx) => {
        // A credit, then a debit beyond it: the whole 10 + 1.
        await credit(tx, 'serial', '1');
        expect(await debit(tx, 'serial', '11')).toBe(true);
      },
      async () => {
        second = db.prisma.$transaction((tx) => debit(tx, 'serial', '10')).then((ok) => ((done = true), ok));
        await sleep(300);
        expect(done).toBe(false); // waits for the first debit's transaction
      },
    );
    expect(await second).toBe(false); // and then sees that nothing is left
    expect((await available('serial')).toFixed()).toBe('0');
    expect(await ledgerProblems()).toEqual([]);
  });

  concurrently('a debit on a shard created in the same transaction is seen by the next exact check', async () => {
    // Shard 0 exists with 10; while a credit in flight holds it, a transaction credits 1 to a new shard and
    // debits 11 there (-10 on that shard). A debit queued behind it must sum that new shard too.
    await db.prisma.$transaction((tx) => credit(tx, 'fresh', '10'));
    await heldOpen(
      (tx) => credit(tx, 'fresh', '5'),
      async () => {
        let second: Promise<boolean> = Promise.resolve(false);
        await heldOpen(
          async (tx) => {
            await credit(tx, 'fresh', '1');
            expect(await debit(tx, 'fresh', '11')).toBe(true);
          },
          async () => {
            second = db.prisma.$transaction((tx) => debit(tx, 'fresh', '10'));
            await sleep(200);
          },
        );
        expect(await second).toBe(false);
      },
    );
    expect((await shards('fresh')).length).toBe(2);
    expect((await available('fresh')).toFixed()).toBe('5');
    expect(await ledgerProblems()).toEqual([]);
  });

  it('a debit beyond the available money is refused and writes nothing', async () => {
    await db.prisma.$transaction((tx) => credit(tx, 'short', '5'));
    const entries = await db.prisma.ledgerEntry.count();
    expect(await db.prisma.$transaction((tx) => debit(tx, 'short', '5.000000000000000001'))).toBe(false);
    await expect(
      db.prisma.$transaction((tx) =>
        postJournal(tx, {
          companyId,
          asset: 'short',
          kind: 'refund',
          postings: [
            { account: ACCOUNTS.merchantAvailable, amount: new Money(-6) },
            { account: ACCOUNTS.chainExternal, amount: new Money(6) },
          ],
        }),
      ),
    ).rejects.toBeInstanceOf(InsufficientFundsError);
    expect(await db.prisma.ledgerEntry.count()).toBe(entries);
    expect(await db.prisma.$transaction((tx) => debit(tx, 'short', '5'))).toBe(true);
    expect((await available('short')).toFixed()).toBe('0');
    // Nothing left: even a tiny debit is refused; a credit and its debit in one transaction pass.
    expect(await db.prisma.$transaction((tx) => debit(tx, 'short', '0.000000000000000001'))).toBe(false);
    expect(await db.prisma.$transaction(async (tx) => (await credit(tx, 'short', '1'), debit(tx, 'short', '1')))).toBe(true);
    expect(await ledgerProblems()).toEqual([]);
  });

  it('many concurrent debits and credits: never negative, never more debited than there was', async () => {
    const asset = 'race';
    // 10 concurrent credits of 1 (several shards on PostgreSQL).
    await Promise.all(Array.from({ length: 10 }, () => transactionWithRetry(db.prisma, (tx) => credit(tx, asset, '1'))));
    expect((await available(asset)).toFixed()).toBe('10');

    // Meanwhile, committed snapshots of the balance (the sum of the shards, one statement) are sampled.
    let sampling = true;
    const samples: string[] = [];
    const sampler = (async () => {
      while (sampling) {
        const [row] = await db.prisma.$queryRaw<{ total: string }[]>`
          SELECT COALESCE(SUM("amount"), 0)::text AS total FROM "Balance"
          WHERE "companyId" = ${companyId}::uuid AND "asset" = ${asset} AND "account" = ${ACCOUNTS.merchantAvailable}`;
        samples.push(row!.total);
        await sleep(5);
      }
    })();

    // 40 debits of 0.4 (16 would do with 10 alone) and 10 credits of 0.1, all at once.
    const debits = Array.from({ length: 40 }, () => transactionWithRetry(db.prisma, (tx) => debit(tx, asset, '0.4')));
    const credits = Array.from({ length: 10 }, () => transactionWithRetry(db.prisma, (tx) => credit(tx, asset, '0.1')));
    const results = await Promise.all(debits);
    await Promise.all(credits);
    sampling = false;
    await sampler;

    const succeeded = results.filter(Boolean).length;
    const final = await available(asset);
    expect(final.toFixed()).toBe(new Money(11).minus(new Money('0.4').times(succeeded)).toFixed());
    expect(final.isNegative()).toBe(false);
    // The first 10 were there all along: at least 25 debits of 0.4 fit; with the credits at most 27.
    expect(succeeded).toBeGreaterThanOrEqual(25);
    expect(succeeded).toBeLessThanOrEqual(27);
    // A failed debit saw less than 0.4, so what is left after the last credit is below 0.4 + 1 (the credits).
    expect(final.lt('1.4')).toBe(true);
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.filter((s) => new Money(s).isNegative())).toEqual([]);
    expect(await ledgerProblems()).toEqual([]);
  });
});
