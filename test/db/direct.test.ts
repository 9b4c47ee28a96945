// The payment path's statements run straight on the pg pool on PostgreSQL (src/db/direct.ts): what they send and
// what they give back must be what $queryRaw sends and gives, value for value, or a payment would be booked from
// other numbers on PostgreSQL than on PGlite. Compared here with a Prisma client on the same database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import { postgresAdapter } from '../../src/db/adapters.ts';
import { queryDirect } from '../../src/db/direct.ts';
import { findPayees } from '../../src/payments/payees.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

describe.runIf(DATABASES.includes('postgres'))('direct statements on PostgreSQL', () => {
  const server = useServer('postgres');
  let pool: pg.Pool;
  let viaPrisma: PrismaClient;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: server.app.config.databaseUrl, max: 2 });
    viaPrisma = new PrismaClient({ adapter: postgresAdapter(pool, false) });
  });
  afterAll(async () => {
    await viaPrisma?.$disconnect();
    await pool?.end();
  });

  it('send and give back every value as $queryRaw does', async () => {
    const when = new Date('2026-11-27T10:11:12.345Z');
    const sql = Prisma.sql`SELECT ${new Prisma.Decimal('0.000000001')}::numeric AS "tiny", ${new Prisma.Decimal('123456789012345678.123456789012345678')}::numeric AS "big",
      ${'-1e-7'}::numeric AS "exp", ${null}::numeric AS "none", ${9007199254740993n}::int8 AS "int8", ${when}::timestamptz AS "at", ${when}::timestamptz + interval '1 microsecond' AS "micro",
      ${JSON.stringify({ b: 1, a: 'é' })}::json AS "json", '{"k": [1, 2]}'::jsonb AS "jsonb", ${'5b7d6a3e-2f0c-4f1e-9a55-0c8e0c3b1f11'}::uuid AS "uuid",
      'pending'::"InvoiceStatus" AS "status", ${true}::boolean AS "flag", ${7}::int AS "count", 3::smallint AS "small", ${'a\\b "c"'}::text AS "text",
      array_to_string(${['x,y', 'q"uote', null, 'back\\slash', 'ü']}::text[], '|', '<null>') AS "joined",
      (SELECT count(*) FROM unnest(${[when, when]}::timestamptz[]) t WHERE t = ${when}::timestamptz)::int AS "dates"`;
    const [direct] = await queryDirect<Record<string, unknown>>(server.app.db.prisma, sql);
    const [reference] = await viaPrisma.$queryRaw<Record<string, unknown>[]>(sql);
    expect(direct).toEqual(reference);
    expect(direct!['tiny']).toBeInstanceOf(Prisma.Decimal);
    expect((direct!['big'] as Prisma.Decimal).toFixed()).toBe('123456789012345678.123456789012345678');
    expect(direct!['int8']).toBe(9007199254740993n);
    expect(direct!['joined']).toBe('x,y|q"uote|<null>|back\\slash|ü');
    expect(direct!['dates']).toBe(2);
  });

  it('refuse a column type they were not checked against instead of giving another shape', async () => {
    await expect(queryDirect(server.app.db.prisma, Prisma.sql`SELECT ARRAY[1, 2]::int8[] AS "ids"`)).rejects.toThrow(/column "ids" has type OID 1016/);
  });

  it('the payee lookup gives what it gives through Prisma', async () => {
    const m = await server.merchant();
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 12.5 }], metadata: { k: 'v' } } });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
    expect(filled.status, filled.text).toBe(200);
    const paid = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: id, amount: '1', confirmations: 19 } });
    expect(paid.status, paid.text).toBe(201);
    const deps = server.app.services.invoices;
    const [direct] = await findPayees(deps, 'test', [{ invoiceId: id }]);
    const [reference] = await findPayees({ ...deps, db: viaPrisma }, 'test', [{ invoiceId: id }]);
    expect(direct).not.toBeNull();
    // `now` is read by each statement: the rest must be the same, value for value.
    expect({ ...direct, now: null }).toEqual({ ...reference, now: null });
    expect(direct!.s_confirmed).toBeInstanceOf(Prisma.Decimal);
    expect(direct!.s_metadata).toEqual({ k: 'v' });
  });

  it('fail with the database error, as $queryRaw does', async () => {
    await expect(queryDirect(server.app.db.prisma, Prisma.sql`SELECT 1 / ${0}::int AS "x"`)).rejects.toThrow(/division by zero/);
  });
});
