// Exports read in keyset pages: many pages give exactly the rows of one ordered query, also where one instant spans
// several pages, with the right balances after; and a page is read only when the client takes the previous one.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.ts';
import { formatPlain } from '../../src/domain/money.ts';
import { exportFile } from '../../src/exports/service.ts';
import { LEDGER_COLUMNS } from '../../src/ledger/entries.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';
import { download, parseCsv, rangeQuery, seedJournals, type CsvRow } from './support.ts';

const BATCH = 3;
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
// 13 journals (26 entries) over four instants: ten entries share the first, eight the third, so pages of three
// split runs of equal created_at.
const INSTANTS = [0, 0, 0, 0, 0, 7, 9, 9, 9, 9, 12, 12, 12].map((ms) => new Date(T0 + ms));

/** What one query in (createdAt, id) order says, balances after by a window sum (independent of the export's code). */
async function expected(db: Db, companyId: string, from: Date, to: Date) {
  const rows = await db.$queryRaw<{ id: string; createdAt: Date; amount: string; balanceAfter: string }[]>`
    SELECT "id"::text AS "id", "createdAt", "amount"::text AS "amount", "balanceAfter"::text AS "balanceAfter" FROM (
      SELECT "id", "createdAt", "amount", SUM("amount") OVER (PARTITION BY "asset", "account" ORDER BY "createdAt", "id") AS "balanceAfter"
      FROM "LedgerEntry" WHERE "companyId" = ${companyId}::uuid
    ) e WHERE "createdAt" >= ${from} AND "createdAt" < ${to} ORDER BY "createdAt", "id"`;
  return rows.map((r) => ({ entry_id: r.id, created_at: r.createdAt.toISOString(), amount: formatPlain(r.amount), balance_after: formatPlain(r.balanceAfter) }));
}

/** Counts the queries an export makes, by what they read. */
function countingDb(db: Db) {
  const counts = { entryPages: 0, openings: 0, invoicePages: 0 };
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === '$queryRaw') {
        return (strings: TemplateStringsArray, ...values: unknown[]) => {
          const sql = strings.join('?');
          if (sql.includes('LEFT JOIN LATERAL')) counts.entryPages++;
          else if (sql.includes('GROUP BY "asset", "account"')) counts.openings++;
          return target.$queryRaw(strings, ...values);
        };
      }
      if (prop === 'invoice') {
        return { findMany: (args: Parameters<Db['invoice']['findMany']>[0]) => (counts.invoicePages++, target.invoice.findMany(args)) };
      }
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;
  return { db: proxy, counts };
}

describe.each(DATABASES)('export pages on %s', (kind) => {
  const server = useServer(kind, { EXPORT_BATCH_SIZE: String(BATCH) });
  let token: string;
  let companyId: string;
  let seeded: Awaited<ReturnType<typeof seedJournals>>;
  const end = new Date(T0 + 13);

  beforeAll(async () => {
    const m = await server.merchant();
    token = m.publicToken;
    companyId = m.companyId;
    seeded = await seedJournals(server.app.db.prisma, companyId, INSTANTS);
  });

  it('many pages of three: exactly the rows of one ordered query, ties at page boundaries included, balances after exact', async () => {
    const res = await download(server, `/api/company/exports/ledger.csv?${rangeQuery(new Date(T0).toISOString(), end.toISOString())}`, token);
    expect(res.status, res.text).toBe(200);
    expect(res.rows).toHaveLength(26);
    expect(res.rows.map((r) => r.entry_id)).toEqual(seeded.map((e) => e.id));
    const pick = (r: CsvRow) => ({ entry_id: r.entry_id, created_at: r.created_at, amount: r.amount, balance_after: r.balance_after });
    expect(res.rows.map(pick)).toEqual(await expected(server.app.db.prisma, companyId, new Date(T0), end));
    // A range that starts inside: balances open with everything before it, so each row keeps its balance after.
    const from = new Date(T0 + 9);
    const tail = await download(server, `/api/company/exports/ledger.csv?${rangeQuery(from.toISOString(), end.toISOString())}`, token);
    expect(tail.rows).toEqual(res.rows.slice(12));
    expect(tail.rows.map(pick)).toEqual(await expected(server.app.db.prisma, companyId, from, end));
    // A page size that divides the rows exactly ends with an empty read, not a lost or repeated row.
    const exact = exportFile({ db: server.app.db.prisma, batchSize: 13 }, { companyId, kind: 'ledger', from: new Date(T0), to: end });
    let text = '';
    for await (const chunk of exact.chunks) text += chunk;
    expect(parseCsv(text).rows).toEqual(res.rows);
  });

  it('streams: the first page reaches the consumer before the next is read; none is read once it stops', async () => {
    const { db, counts } = countingDb(server.app.db.prisma);
    const range = { companyId, kind: 'ledger' as const, from: new Date(T0), to: end };
    const source = exportFile({ db, batchSize: 2 }, range).chunks[Symbol.asyncIterator]();
    const first = await source.next();
    expect(first.done).toBe(false);
    // The header and the first two rows, after one read of the opening balances and one page.
    const lines = (first.value as string).split('\r\n');
    expect(lines[0]).toBe(LEDGER_COLUMNS.join(','));
    expect(lines.slice(1, -1).map((l) => l.split(',')[0])).toEqual(seeded.slice(0, 2).map((e) => e.id));
    expect(counts).toEqual({ entryPages: 1, openings: 1, invoicePages: 0 });
    await source.next();
    expect(counts.entryPages).toBe(2);
    // The consumer goes away (what the HTTP layer does when the client does): no further page is read.
    await source.return!(undefined);
    expect(await source.next()).toEqual({ done: true, value: undefined });
    expect(counts.entryPages).toBe(2);

    // To the end: 26 rows in pages of 2 are 13 full pages and one empty read.
    const all = exportFile({ db, batchSize: 2 }, range).chunks;
    let chunks = 0;
    for await (const _ of all) chunks++;
    expect(chunks).toBe(13);
    expect(counts.entryPages).toBe(2 + 14);
  });

  it('the invoice export reads its pages lazily as well', async () => {
    const { db, counts } = countingDb(server.app.db.prisma);
    for (let i = 0; i < 5; i++) {
      expect((await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: `n${i}`, price: 1 }] } })).status).toBe(201);
    }
    const source = exportFile({ db, batchSize: 2 }, { companyId, kind: 'invoices', from: new Date(0), to: new Date('9999-01-01T00:00:00Z') }).chunks[Symbol.asyncIterator]();
    const first = await source.next();
    expect((first.value as string).split('\r\n').filter(Boolean)).toHaveLength(3);
    expect(counts.invoicePages).toBe(1);
    await source.return!(undefined);
    expect(counts.invoicePages).toBe(1);
    // Four of them at one instant: pages of three split the run; the order is (created_at, id) as the database sorts.
    const ids = (await server.app.db.prisma.invoice.findMany({ where: { companyId }, select: { id: true }, orderBy: { id: 'asc' } })).map((i) => i.id);
    await server.app.db.prisma.invoice.updateMany({ where: { id: { in: ids.slice(0, 4) } }, data: { createdAt: new Date(T0) } });
    const ordered = await server.app.db.prisma.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "Invoice" WHERE "companyId" = ${companyId}::uuid ORDER BY "createdAt", "id"`;
    const res = await download(server, `/api/company/exports/invoices.csv?${rangeQuery('0001-01-01T00:00:00Z', '9999-01-01T00:00:00Z')}`, token);
    expect(res.rows.map((r) => r.invoice_id)).toEqual(ordered.map((r) => r.id));
    expect(res.rows.slice(0, 4).map((r) => r.created_at)).toEqual(Array(4).fill(new Date(T0).toISOString()));
    // From that instant on, and up to it: [from, to) again.
    const at = new Date(T0).toISOString();
    const from = await download(server, `/api/company/exports/invoices.csv?${rangeQuery(at, '9999-01-01T00:00:00Z')}`, token);
    expect(from.rows).toEqual(res.rows);
    expect((await download(server, `/api/company/exports/invoices.csv?${rangeQuery('0001-01-01T00:00:00Z', at)}`, token)).rows).toEqual([]);
  });
});
