// `npm run ledger:verify` (src/bin/ledger-verify.ts) as a child process on a database no server holds: it passes on
// the ledger the server wrote, and names the broken invariant (exit 1) once the database is tampered with.
import { testMerchant, type TestMerchant } from '../support/server.ts';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../src/app.ts';
import { createCompany } from '../../src/companies/service.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/client.ts';
import { verifyLedger } from '../../src/features.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { environment } from '../support/server-env.ts';
import { http, runCli, stopAllChildren } from '../support/processes.ts';

const PAID_INVOICES = 3;

describe.each(DATABASES)('ledger:verify CLI on %s', { timeout: 180_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  let env: Record<string, string>;
  let dbUrl: string;
  let merchant: TestMerchant;

  /** The database, held open by this process between CLI runs (PGlite admits one process at a time). */
  let held: Awaited<ReturnType<typeof openDatabase>> | null = null;
  async function withDb<T>(fn: (prisma: Db) => Promise<T>): Promise<T> {
    held ??= await openDatabase({ url: dbUrl, migrate: false, poolSize: 1, role: 'test' });
    return fn(held.prisma);
  }
  async function releaseDb() {
    await held?.close();
    held = null;
  }

  /** Runs `check` on the tampered database; `restore` runs whatever happens, so the next test starts clean. */
  async function tampered<T>(tamper: (db: Db) => Promise<T>, restore: (db: Db, state: T) => Promise<unknown>, check: (state: T) => Promise<void>) {
    const state = await withDb(tamper);
    try {
      await check(state);
    } finally {
      await withDb((db) => restore(db, state));
    }
    // Restored: clean again (checked in this process; the CLI's exit codes are covered by the cases).
    expect((await withDb(verifyLedger)).problems).toEqual([]);
  }

  // The CLI's exit codes and output are checked on a pass and a failure; the other cases read the same report
  // in this process, which is quicker than a CLI run each.
  const verifyHere = () => withDb(verifyLedger);
  const verify = async () => {
    await releaseDb();
    const res = await runCli('src/bin/ledger-verify.ts', [], env);
    expect(res.json, `stdout: ${res.stdout}\nstderr: ${res.stderr}`).toMatchObject({ ok: expect.any(Boolean), problems: expect.any(Array) });
    return res;
  };

  beforeAll(async () => {
    // DATA_DIR holds no admin state file (no server runs): the CLI opens the database itself.
    env = await environment(kind, databases);
    const config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '3' });
    dbUrl = config.databaseUrl;
    const app = await startApp(config, createLogger('silent'));
    try {
      merchant = testMerchant(await createCompany(app.db.prisma, { name: 'Ledger Test' }));
      const token = merchant.publicToken;
      for (let i = 0; i < PAID_INVOICES; i++) {
        const created = await http('POST', `${app.url}/api/invoices/v1/regular`, { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
        expect(created.status, created.text).toBe(201);
        const id = created.body.id as string;
        const filled = await http('POST', `${app.url}/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
        expect(filled.status, filled.text).toBe(200);
        const paid = await http('POST', `${app.url}/api/sandbox/transfers`, {
          token,
          json: { invoiceId: id, amount: '101', confirmations: 19, txHash: randomBytes(16).toString('hex') },
        });
        expect(paid.status, paid.text).toBe(201);
        const read = await http('GET', `${app.url}/api/invoices/v1/regular/${id}`);
        expect(read.body.status).toBe('done');
      }
      // One invoice nobody paid.
      const unpaid = await http('POST', `${app.url}/api/invoices/v1/regular`, { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 5 }] } });
      const filled = await http('POST', `${app.url}/api/invoices/v1/regular/${unpaid.body.id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
      expect(filled.body.status).toBe('pending');
    } finally {
      await app.stop();
    }
  });

  afterAll(async () => {
    await releaseDb();
    await stopAllChildren();
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('passes on the ledger as the server wrote it (exit 0)', async () => {
    const res = await verify();
    expect(res.code, res.stderr).toBe(0);
    // Per invoice: a payment journal and a fee journal of 2 entries each; balances: chain_external,
    // merchant_available, platform_fees.
    expect(res.json).toEqual({
      ok: true,
      mode: null,
      journals: 2 * PAID_INVOICES,
      entries: 4 * PAID_INVOICES,
      balances: 3,
      problems: [],
      // The merchant's test side has the journals; its live side none (docs/modes.md).
      modes: { test: { ok: true, journals: 2 * PAID_INVOICES, problems: 0 }, live: { ok: true, journals: 0, problems: 0 } },
      custodySurpluses: [],
    });
  });

  it('a running balance that is not the sum of its entries: running-balance, exit 1', async () => {
    await tampered(
      (db) => db.$executeRawUnsafe(`UPDATE "Balance" SET "amount" = "amount" + 1 WHERE "account" = 'merchant_available'`),
      (db) => db.$executeRawUnsafe(`UPDATE "Balance" SET "amount" = "amount" - 1 WHERE "account" = 'merchant_available'`),
      async () => {
        const res = await verify();
        expect(res.code).toBe(1);
        expect(res.json.ok).toBe(false);
        expect(res.json.problems).toEqual([
          {
            check: 'running-balance',
            mode: 'test',
            key: `${merchant.companyId}/trc20usdt/merchant_available`,
            expected: String(100 * PAID_INVOICES),
            actual: String(100 * PAID_INVOICES + 1),
          },
        ]);
      },
    );
  });

  it('a balance is the sum of its shards: money moved between shards is no problem', async () => {
    const key = { companyId: merchant.companyId, asset: 'trc20usdt', account: 'merchant_available' };
    await tampered(
      async (db) => {
        const [first] = await db.balance.findMany({ where: key, orderBy: { shard: 'asc' }, take: 1 });
        const spare = first!.shard === 15 ? 14 : 15;
        await db.balance.update({ where: { companyId_asset_account_shard: { ...key, shard: first!.shard } }, data: { amount: { decrement: 250 } } });
        await db.balance.create({ data: { ...key, shard: spare, amount: 250 } });
        return { first: first!.shard, spare };
      },
      async (db, { first, spare }) => {
        await db.balance.delete({ where: { companyId_asset_account_shard: { ...key, shard: spare } } });
        await db.balance.update({ where: { companyId_asset_account_shard: { ...key, shard: first } }, data: { amount: { increment: 250 } } });
      },
      async () => {
        const res = await verifyHere();
        expect(res.problems).toEqual([]);
        expect(res.balances).toBe(3);
      },
    );
  });

  it('a negative available balance: running-balance and negative-balance, exit 1', async () => {
    await tampered(
      // One shard (the first).
      (db) => db.$executeRawUnsafe(`UPDATE "Balance" SET "amount" = "amount" - 1000 WHERE "account" = 'merchant_available' AND "shard" = (SELECT MIN("shard") FROM "Balance" WHERE "account" = 'merchant_available')`),
      (db) => db.$executeRawUnsafe(`UPDATE "Balance" SET "amount" = "amount" + 1000 WHERE "account" = 'merchant_available' AND "shard" = (SELECT MIN("shard") FROM "Balance" WHERE "account" = 'merchant_available')`),
      async () => {
        const res = await verifyHere();
        const k = `${merchant.companyId}/trc20usdt/merchant_available`;
        expect(res.problems).toEqual([
          { check: 'running-balance', mode: 'test', key: k, expected: String(100 * PAID_INVOICES), actual: String(100 * PAID_INVOICES - 1000) },
          { check: 'negative-balance', mode: 'test', key: k, expected: '>= 0', actual: String(100 * PAID_INVOICES - 1000) },
        ]);
      },
    );
  });

  it('a negative balance of an account a feature declares as held money (autoswap\'s swap_hold): negative-balance too', async () => {
    await tampered(
      (db) => db.$executeRawUnsafe(`INSERT INTO "Balance" ("companyId", "asset", "account", "shard", "amount", "updatedAt") VALUES ('${merchant.companyId}', 'trc20usdt', 'swap_hold', 0, -5, now())`),
      (db) => db.$executeRawUnsafe(`DELETE FROM "Balance" WHERE "account" = 'swap_hold' AND "companyId" = '${merchant.companyId}'`),
      async () => {
        const k = `${merchant.companyId}/trc20usdt/swap_hold`;
        expect((await verifyHere()).problems).toEqual([
          { check: 'running-balance', mode: 'test', key: k, expected: '0', actual: '-5' },
          { check: 'negative-balance', mode: 'test', key: k, expected: '>= 0', actual: '-5' },
        ]);
      },
    );
  });

  it('a journal missing one of its entries: journal-balance, exit 1', async () => {
    await tampered(
      async (db) => {
        const credit = await db.ledgerEntry.findFirstOrThrow({ where: { kind: 'fee', account: 'platform_fees' } });
        await db.ledgerEntry.delete({ where: { id: credit.id } });
        return credit;
      },
      (db, removed) => db.ledgerEntry.create({ data: removed }),
      async (removed) => {
        const res = await verifyHere();
        expect(res.ok).toBe(false);
        expect(res.entries).toBe(4 * PAID_INVOICES - 1);
        expect(res.problems).toHaveLength(3);
        // (Compared as a number: this check reports the database's numeric text, e.g. "-1.000000000000000000".)
        expect(res.problems).toContainEqual({
          check: 'journal-balance',
            mode: 'test',
          key: `${removed.journalId}/trc20usdt`,
          expected: '0',
          actual: expect.toSatisfy((v: string) => Number(v) === -1, 'the amount -1'),
        });
        // The platform_fees balance no longer equals its entries either.
        expect(res.problems).toContainEqual({
          check: 'running-balance',
            mode: 'test',
          key: `${merchant.companyId}/trc20usdt/platform_fees`,
          expected: String(PAID_INVOICES - 1),
          actual: String(PAID_INVOICES),
        });
        // And that invoice is done without its fee.
        expect(res.problems).toContainEqual({
          check: 'invoice-status',
            mode: 'test',
          key: `${removed.invoiceId}/done`,
          expected: 'status consistent with money',
          actual: 'done without its fee journal (paid 101, confirmed 101)',
        });
      },
    );
  });

  it('a confirmed transfer the ledger does not match: chain-records, exit 1', async () => {
    await tampered(
      async (db) => {
        const t = await db.chainTransfer.findFirstOrThrow({ where: { state: 'confirmed' } });
        await db.chainTransfer.update({ where: { id: t.id }, data: { amount: '102' } });
        return t;
      },
      (db, t) => db.chainTransfer.update({ where: { id: t.id }, data: { amount: t.amount } }),
      async (t) => {
        const res = await verifyHere();
                expect(res.problems).toEqual([
          {
            check: 'chain-records',
            mode: 'test',
            key: `${merchant.companyId}/trc20usdt`,
            expected: String(-(101 * PAID_INVOICES + 1)),
            actual: String(-101 * PAID_INVOICES),
          },
          {
            check: 'invoice-status',
            mode: 'test',
            key: `${t.invoiceId}/done`,
            expected: 'status consistent with money',
            actual: 'paidAmount differs from the confirmed transfers (paid 101, confirmed 102)',
          },
        ]);
      },
    );
  });

  it('statuses that disagree with the money: invoice-status, exit 1', async () => {
    const onPaidInvoice = (name: string, column: string, bad: string, good: string, problem: string, status: string) => ({
      name,
      tamper: `UPDATE "Invoice" SET ${column} = ${bad} WHERE "id" = $1`,
      restore: `UPDATE "Invoice" SET ${column} = ${good} WHERE "id" = $1`,
      problem,
      status,
    });
    const cases: { name: string; tamper: string; restore: string; problem: string; status: string }[] = [
      {
        // What an unconfirmed transfer inside a 100% tolerance once did: done with nothing final and no fee.
        name: 'done without confirmed money',
        tamper: `UPDATE "Invoice" SET "status" = 'done', "feeCharged" = 0 WHERE "status" = 'pending' AND "id" <> $1`,
        restore: `UPDATE "Invoice" SET "status" = 'pending', "feeCharged" = NULL WHERE "feeCharged" = 0 AND "id" <> $1`,
        problem: 'done without confirmed money (paid 0, confirmed 0)',
        status: 'done',
      },
      // One column of the paid invoice set wrong, then back.
      onPaidInvoice('done with a fee of zero', '"feeCharged"', '0', '1', 'done without its fee journal (paid 101, confirmed 101)', 'done'),
      onPaidInvoice('a pending invoice holding a fee', '"status"', "'pending'", "'done'", 'a fee on an invoice that is not done (paid 101, confirmed 101)', 'pending'),
      onPaidInvoice(
        'done, not accepted, with far less than the amount',
        '"paymentAmount"',
        '1000',
        '101',
        'done with less than the tolerated share of the amount, not accepted by the merchant (paid 101, confirmed 101)',
        'done',
      ),
    ];
    const invoiceId = await withDb(async (db) => (await db.invoice.findFirstOrThrow({ where: { status: 'done' } })).id);
    for (const c of cases) {
      await tampered(
        (db) => db.$executeRawUnsafe(c.tamper, invoiceId),
        (db) => db.$executeRawUnsafe(c.restore, invoiceId),
        async () => {
          const res = await verifyHere();
                    expect(res.problems, c.name).toEqual([
            { check: 'invoice-status', mode: 'test', key: expect.stringMatching(new RegExp(`/${c.status}$`)), expected: 'status consistent with money', actual: c.problem },
          ]);
        },
      );
    }
  });
});
