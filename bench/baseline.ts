// The yardstick: a bare node:http server that replays the service's SQL (sql.ts) per request with the raw
// driver, so "service / baseline" isolates what Prisma, validation, GraphQL and presentation cost.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { statementNamer } from '../src/db/prepared.ts';
import { newInvoiceId } from '../src/invoices/ids.ts';
import { SQL, sqlTimestamp } from './sql.ts';

type Row = unknown[];
/** One statement, rows as arrays (both Prisma adapters ask for rowMode 'array'). */
export type Query = (text: string, values?: unknown[]) => Promise<Row[]>;

export interface SqlBackend {
  /** Outside a transaction: any pooled connection, like Prisma's non-transactional queries. */
  query: Query;
  /** BEGIN ... COMMIT on one connection (ROLLBACK on error), like Prisma's interactive $transaction. */
  transaction<T>(fn: (q: Query) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function pgBackend(url: string, poolSize: number): SqlBackend {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client killed by the server must not crash the benchmark.
  pool.on('error', () => {});
  // Named where the service names it (the adapter's generator): the same SQL, prepared the same way.
  const name = statementNamer();
  const on =
    (c: pg.Pool | pg.PoolClient): Query =>
    async (text, values) =>
      (await c.query<Row>({ text, values, rowMode: 'array', name: name({ sql: text }) })).rows;
  return {
    query: on(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query(SQL.begin);
        const result = await fn(on(client));
        await client.query(SQL.commit);
        return result;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** PGlite's own API, as pglite-prisma-adapter uses it: query() outside, transaction() for BEGIN/COMMIT. */
export function pgliteBackend(db: PGlite): SqlBackend {
  const opts = { rowMode: 'array' as const };
  return {
    query: async (text, values) => (await db.query<Row>(text, values, opts)).rows,
    transaction: (fn) => db.transaction((tx) => fn(async (text, values) => (await tx.query<Row>(text, values, opts)).rows)),
    close: () => db.close(),
  };
}

/** A company row for the baseline's invoices (the service's createCompany is not part of what is measured). */
export async function insertBaselineCompany(backend: SqlBackend): Promise<string> {
  const id = randomUUID();
  await backend.query(
    `INSERT INTO "public"."Company" ("id","accountId","mode","name","logoUrl","acceptedAssets","publicTokenHash","secretKey","updatedAt")
     VALUES ($1,$1,'test',$2,'',$3,$4,$5,now())`,
    [id, 'Bench baseline', ['btc', 'eth', 'usdt'], `baseline-${id}`, `sk_${id}`],
  );
  return id;
}

interface CreateBody {
  invoiceCurrency: string;
  items: { name: string; price: number }[];
}

function parseCreate(raw: string): CreateBody | null {
  try {
    const b = JSON.parse(raw) as CreateBody;
    const ok = typeof b.invoiceCurrency === 'string' && Array.isArray(b.items) && b.items.length > 0 &&
      b.items.every((i) => typeof i?.name === 'string' && typeof i.price === 'number');
    return ok ? b : null;
  } catch {
    return null;
  }
}

const LIMIT_1 = '1';
const OFFSET_0 = '0';

/** The invoice, then its relations at once, as Prisma resolves `include` (GraphQL asks company and items only, batched). */
async function readInvoice(db: SqlBackend, id: string, restShape: boolean, companyId: string) {
  const [invoice] = restShape ? await db.query(SQL.selectInvoice, [id, LIMIT_1, OFFSET_0]) : await db.query(SQL.selectInvoiceOfCompany, [id, companyId, LIMIT_1, OFFSET_0]);
  if (!invoice) return null;
  const none = Promise.resolve([]);
  const [company, items, address, transfers, autoswaps, refund] = await Promise.all([
    db.query(restShape ? SQL.selectCompany : SQL.selectCompanyIn, [invoice[1], OFFSET_0]),
    db.query(restShape ? SQL.selectItems : SQL.selectItemsIn, [id, OFFSET_0]),
    restShape ? db.query(SQL.selectAddress, [id, OFFSET_0]) : none,
    restShape ? db.query(SQL.selectTransfers, [id, OFFSET_0]) : none,
    restShape ? db.query(SQL.selectAutoswaps, [id, OFFSET_0]) : none,
    restShape ? db.query(SQL.selectRefund, [id, OFFSET_0]) : none,
  ]);
  return { id: invoice[0], status: invoice[2], invoice, company: company[0] ?? null, items, address: address[0] ?? null, transfers, autoswaps, refund: refund[0] ?? null };
}

async function createInvoice(db: SqlBackend, companyId: string, body: CreateBody) {
  const id = newInvoiceId();
  const total = body.items.reduce((sum, i) => sum + i.price, 0).toFixed(2);
  const payload = JSON.stringify({ invoiceId: id, status: 'created', message: 'Invoice created' });
  const [invoice] = await db.query(SQL.createInvoice, [
    id, companyId, body.invoiceCurrency, null, false, null, null, total, null, null, null, null, new Date(), companyId, id,
    body.items.map((_, position) => position), body.items.map((i) => i.name), body.items.map((i) => String(i.price)),
    randomUUID(), companyId, 'invoice.created', 'invoice', id, payload,
  ]);
  return { id, status: 'created', invoice, items: body.items };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  // Rows can carry bigint (Event.seq) or Date values; keep serialisation total.
  const json = JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

export interface BaselineServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Routes:
 *   POST /create        the service's create statements (transaction + read-back), 201 with the invoice
 *   GET  /read/:id      the REST read statements (4 SELECTs)
 *   GET  /read-gql/:id  the GraphQL read statements (3 SELECTs, no address)
 *   POST /insert        one autocommit INSERT "Invoice" (the machine's ceiling for a write)
 */
export async function startBaseline(db: SqlBackend, companyId: string): Promise<BaselineServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    if (req.method === 'POST' && (url === '/create' || url === '/insert')) {
      const body = parseCreate(await readBody(req));
      if (!body) return send(res, 400, { error: 'bad body' });
      if (url === '/create') return send(res, 201, await createInvoice(db, companyId, body));
      const id = newInvoiceId();
      const now = sqlTimestamp(new Date());
      const total = body.items.reduce((sum, i) => sum + i.price, 0).toFixed(2);
      await db.query(SQL.insertInvoice, [id, companyId, 'created', body.invoiceCurrency, null, false, null, null, total, '0', '0', now, now]);
      return send(res, 201, { id });
    }
    const read = /^\/(read|read-gql)\/([^/?]+)$/.exec(url);
    if (req.method === 'GET' && read) {
      const found = await readInvoice(db, decodeURIComponent(read[2]!), read[1] === 'read', companyId);
      return found ? send(res, 200, found) : send(res, 404, { error: 'not found' });
    }
    send(res, 404, { error: 'no route' });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(e) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
