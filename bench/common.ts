// Request bodies and database plumbing shared by invoices.ts (the benchmark) and profile.ts.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_SERVER_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export const CREATE_BODY = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }, { name: 'Cake', price: 3.25 }] });
// The success member of CreateInvoiceResult (named MutationCreateInvoiceSuccess before the schema review).
export const GQL_CREATE = JSON.stringify({
  query: 'mutation($i: CreateInvoiceInput!){ createInvoice(input:$i){ __typename ... on CreateInvoiceSuccess { invoice { id status } } } }',
  variables: { i: { invoiceCurrency: 'USD', items: [{ name: 'Coffee', price: '4.5' }, { name: 'Cake', price: '3.25' }] } },
});
const GQL_READ = 'query($id: ID!){ invoice(id:$id){ id status createdAt company { name } content { items { name price } } } }';
export const gqlRead = (id: string) => JSON.stringify({ query: GQL_READ, variables: { id } });

export const log = (msg: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/**
 * A POST answered within `ms`, its JSON body read. The deadline ends with the answer: an AbortSignal.timeout stays
 * armed, and firing during a later measured run it cost the in-process server's event loop an abort per request.
 */
export async function postJson(url: string, headers: Record<string, string>, body: string, ms = 10_000): Promise<{ status: number; json: Record<string, unknown> }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`POST ${url}: no answer within ${ms} ms`)), ms);
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  } finally {
    clearTimeout(timer);
  }
}

/** POSTs `count` creates, `concurrency` at a time, and returns the new invoice ids. */
export async function seed(url: string, headers: Record<string, string>, count: number, concurrency = 10): Promise<string[]> {
  const ids: string[] = [];
  const worker = async () => {
    while (ids.length < count) {
      const { status, json: body } = await postJson(url, headers, CREATE_BODY);
      if (status !== 201 || typeof body['id'] !== 'string') throw new Error(`seeding ${url}: ${status} ${JSON.stringify(body)}`);
      ids.push(body['id']);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids.slice(0, count);
}

/** Creates <prefix>_<random> on the server; the returned drop() waits for the service's pool to go first. */
export async function createBenchDatabase(serverUrl: string, prefix = 'payrail_bench') {
  const admin = new pg.Client({ connectionString: serverUrl });
  admin.on('error', () => {});
  await admin.connect();
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      // pg's Pool.end() resolves before its backends are gone, and the service's pool has no 'error'
      // listener: terminating one of them with FORCE would crash this process. Wait for them instead.
      for (let i = 0; i < 50; i++) {
        const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
