// The hot statements (invoice create, the payee lookup, the payment booking) run as named statements on PostgreSQL:
// each connection parses them once and reuses the plan (src/db/prepared.ts, docs/operations.md). Checked on the
// server's one pool connection through pg_prepared_statements; DB_PREPARED_STATEMENTS=0 names none; a column
// added by a later release's migration does not break a connection that prepared them before.
import { describe, expect, it } from 'vitest';
import { MAX_PREPARED_STATEMENTS, prepared, statementNamer } from '../../src/db/prepared.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

describe('statementNamer', () => {
  const marked = (text: string) => prepared(Prisma.sql`${Prisma.raw(text)}`).sql;

  it('names marked texts only, one stable name per text', () => {
    const name = statementNamer();
    expect(name({ sql: 'SELECT 1' })).toBeUndefined();
    const a = name({ sql: marked('SELECT 1') });
    expect(a).toMatch(/^payrail_[0-9a-f]{40}$/);
    expect(name({ sql: marked('SELECT 1') })).toBe(a);
    expect(name({ sql: marked('SELECT 2') })).not.toBe(a);
    // Another namer (another process, the bench's baseline) gives the same text the same name.
    expect(statementNamer()({ sql: marked('SELECT 1') })).toBe(a);
  });

  it('names at most its limit of texts; the ones named keep their names', () => {
    const name = statementNamer(3);
    const names = ['SELECT 1', 'SELECT 2', 'SELECT 3'].map((t) => name({ sql: marked(t) }));
    expect(names.every((n) => n !== undefined)).toBe(true);
    expect(name({ sql: marked('SELECT 4') })).toBeUndefined();
    expect(name({ sql: marked('SELECT 2') })).toBe(names[1]);
    expect(MAX_PREPARED_STATEMENTS).toBeGreaterThanOrEqual(16);
  });
});

async function payOne(server: TestServer, m: TestMerchant): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
  expect(filled.status, filled.text).toBe(200);
  const paid = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: filled.body.paymentDetails.amount, confirmations: 19 } });
  expect(paid.status, paid.text).toBe(201);
  expect(paid.body.state).toBe('confirmed');
  const read = await server.request('GET', `/api/invoices/v1/regular/${id}`);
  expect(read.body.status).toBe('done');
  return id;
}

const HOT = ['WITH new_invoice AS', 'FROM "PaymentAddress" a', 'new_transfer AS (INSERT INTO "ChainTransfer"'];
/** Run on wake-ups after commits (the event bus's read, the webhook worker's claim): named, so not planned each time. */
const BACKGROUND = ['WITH h AS (SELECT (pg_snapshot_xmin', 'WITH due AS ('];

/**
 * The named statements of the server's connection (DB_POOL_SIZE=1 and WEBHOOK_DB_POOL_SIZE=0: every query of the server runs on it) among
 * `texts`: background jobs name theirs whenever they first run, so each check looks at the statements it is about.
 */
async function namedStatements(server: TestServer, texts = HOT): Promise<{ name: string; statement: string }[]> {
  const rows = await server.app.db.prisma.$queryRawUnsafe<{ name: string; statement: string }[]>(
    `SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'payrail\\_%' ORDER BY statement`,
  );
  return rows.filter((row) => texts.some((text) => row.statement.includes(text)));
}

describe.runIf(DATABASES.includes('postgres'))('named statements on PostgreSQL', () => {
  describe('by default', () => {
    const server = useServer('postgres', { DB_POOL_SIZE: '1', WEBHOOK_DB_POOL_SIZE: '0' });

    it('the create, the payee lookup and the booking are named once each, and reused', async () => {
      const m = await server.merchant();
      await payOne(server, m);
      const first = await namedStatements(server);
      for (const text of HOT) expect(first.filter((s) => s.statement.includes(text)), text).toHaveLength(1);
      // The lookup and the booking go straight to the pool (db/direct.ts), under names of their own.
      const direct = first.filter((s) => s.name.startsWith('payrail_direct_')).map((s) => s.statement);
      expect(direct).toHaveLength(2);
      for (const text of HOT.slice(1)) expect(direct.some((s) => s.includes(text)), text).toBe(true);
      await payOne(server, m);
      await payOne(server, m);
      expect(await namedStatements(server)).toEqual(first);
    });

    it("the event bus's read and the webhook worker's claim, run on every wake-up, are named", async () => {
      const m = await server.merchant();
      await payOne(server, m);
      await expect.poll(async () => (await namedStatements(server, BACKGROUND)).length, { timeout: 10_000 }).toBe(BACKGROUND.length);
    });

    it('a column a later release adds to the tables they read does not break them (no `*` in their results)', async () => {
      const m = await server.merchant();
      await payOne(server, m);
      expect(await namedStatements(server)).toHaveLength(HOT.length);
      for (const table of ['Invoice', 'PaymentAddress', 'ChainTransfer']) {
        await server.app.db.prisma.$executeRawUnsafe(`ALTER TABLE "${table}" ADD COLUMN "laterRelease" integer`);
      }
      try {
        await payOne(server, m);
        await payOne(server, m);
      } finally {
        for (const table of ['Invoice', 'PaymentAddress', 'ChainTransfer']) {
          await server.app.db.prisma.$executeRawUnsafe(`ALTER TABLE "${table}" DROP COLUMN "laterRelease"`);
        }
      }
      expect((await verifyLedger(server.app.db.prisma)).ok).toBe(true);
    });
  });

  describe('DB_PREPARED_STATEMENTS=0', () => {
    const server = useServer('postgres', { DB_POOL_SIZE: '1', WEBHOOK_DB_POOL_SIZE: '0', DB_PREPARED_STATEMENTS: '0' });

    it('names none, and payments work the same', async () => {
      const m = await server.merchant();
      await payOne(server, m);
      await payOne(server, m);
      expect(await namedStatements(server, [...HOT, ...BACKGROUND])).toEqual([]);
      expect((await verifyLedger(server.app.db.prisma)).ok).toBe(true);
    });
  });
});

describe.each(DATABASES)('the marked statements on %s', (kind) => {
  const server = useServer(kind);

  it('pay invoices as before (PGlite ignores the mark)', async () => {
    const m = await server.merchant();
    for (let i = 0; i < 3; i++) await payOne(server, m);
    expect((await verifyLedger(server.app.db.prisma)).ok).toBe(true);
  });
});
