// The ledger export: every entry of a company in a range, with its account's balance after it.
import type { ExportRange } from '../domain/exports.ts';
import type { Db } from '../db/client.ts';
import { balancesBefore, ledgerCells, readEntryPage, RunningBalances, type LedgerEntryRecord } from '../ledger/entries.ts';
import { keysetPages } from './csv.ts';

export interface LedgerExportRow {
  entry: LedgerEntryRecord;
  balanceAfter: ReturnType<RunningBalances['add']>;
}

/**
 * The entries of the range in (createdAt, id) order, a page at a time, each with its balance after: the balance of
 * its asset and account before `from` plus the running sum of the range up to it.
 */
export async function* ledgerRows(db: Db, companyId: string, range: ExportRange, batchSize: number): AsyncGenerator<LedgerExportRow[]> {
  const balances = new RunningBalances(await balancesBefore(db, companyId, range.from));
  for await (const page of keysetPages<LedgerEntryRecord>((after, limit) => readEntryPage(db, companyId, range, after, limit), batchSize)) {
    yield page.map((entry) => ({ entry, balanceAfter: balances.add(entry) }));
  }
}

export async function* ledgerCsvRows(db: Db, companyId: string, range: ExportRange, batchSize: number): AsyncGenerator<string[][]> {
  for await (const page of ledgerRows(db, companyId, range, batchSize)) yield page.map((r) => ledgerCells(r.entry, r.balanceAfter));
}
