// Helpers of the export tests: downloads parsed as CSV, and ledger entries written straight to the database.
import { checkApiExchange } from '../support/contract.ts';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { expect } from 'vitest';
import type { Db } from '../../src/db/client.ts';
import type { INVOICE_COLUMNS } from '../../src/exports/invoices.ts';
import type { LEDGER_COLUMNS } from '../../src/ledger/entries.ts';
import type { TestServer } from '../support/server.ts';

/** A row of either export, by column name. */
export type CsvRow = Record<(typeof LEDGER_COLUMNS)[number] | (typeof INVOICE_COLUMNS)[number], string>;

export interface CsvDownload {
  status: number;
  headers: Headers;
  text: string;
  /** The header row. */
  columns: string[];
  /** Every other row, by column name. */
  rows: CsvRow[];
}

/** Reads a CSV answer; checks the RFC 4180 framing (CRLF after every record) on the way. */
export function parseCsv(text: string): { columns: string[]; rows: CsvRow[] } {
  expect(text.endsWith('\r\n'), 'the file ends with CRLF').toBe(true);
  const records = parse(text, { record_delimiter: '\r\n' }) as string[][];
  const [columns, ...body] = records;
  return { columns: columns!, rows: body.map((r) => Object.fromEntries(columns!.map((c, i) => [c, r[i]!])) as CsvRow) };
}

export async function download(server: TestServer, path: string, token?: string): Promise<CsvDownload> {
  const res = await fetch(`${server.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  checkApiExchange({ method: 'GET', path, status: res.status, contentType: res.headers.get('content-type'), text });
  if (res.status !== 200) return { status: res.status, headers: res.headers, text, columns: [], rows: [] };
  return { status: res.status, headers: res.headers, text, ...parseCsv(text) };
}

export const rangeQuery = (from: string, to: string) => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;

/**
 * Writes balanced payment-like journals (chain_external -x, merchant_available +x) of a company straight to the
 * database, one per instant given (several may share one), with their running balances, as postJournal would.
 * Answers the entries in (createdAt, id) order.
 */
export async function seedJournals(db: Db, companyId: string, instants: Date[], asset = 'trc20usdt'): Promise<{ id: string; createdAt: Date; amount: string }[]> {
  const entries = instants.flatMap((at, i) => {
    const journalId = randomUUID();
    const amount = `${i + 1}.${String(i).padStart(3, '0')}`;
    return [
      { id: randomUUID(), journalId, account: 'chain_external', amount: `-${amount}`, createdAt: at },
      { id: randomUUID(), journalId, account: 'merchant_available', amount, createdAt: at },
    ];
  });
  for (const e of entries) {
    await db.$executeRaw`
      INSERT INTO "LedgerEntry" ("id", "journalId", "companyId", "asset", "account", "amount", "kind", "createdAt")
      VALUES (${e.id}::uuid, ${e.journalId}::uuid, ${companyId}::uuid, ${asset}, ${e.account}, ${e.amount}::numeric, 'deposit', ${e.createdAt}::timestamptz)`;
  }
  await db.$executeRaw`
    INSERT INTO "Balance" ("companyId", "asset", "account", "shard", "amount", "updatedAt")
    SELECT "companyId", "asset", "account", 0, SUM("amount"), now() FROM "LedgerEntry" WHERE "companyId" = ${companyId}::uuid GROUP BY "companyId", "asset", "account"
    ON CONFLICT ("companyId", "asset", "account", "shard") DO UPDATE SET "amount" = EXCLUDED."amount"`;
  return entries
    .map((e) => ({ id: e.id, createdAt: e.createdAt, amount: e.amount }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
