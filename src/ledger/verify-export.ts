// ledger:verify --export: a ledger export (CSV) checked against the ledger. The file and the company's entries of
// the range are walked side by side in (createdAt, id) order, a page of entries at a time (bounded memory whatever
// the file's size): every row must be its entry exactly (every cell, balance after included), every entry of the
// range must have its row, and nothing else may be there.
import type { Decimal } from 'decimal.js';
import type { Db } from '../db/client.ts';
import type { ExportRange } from '../domain/exports.ts';
import { balancesBefore, companyOfEntry, compareKeys, ledgerCells, LEDGER_COLUMNS, readEntryPage, RunningBalances, type EntryKey, type LedgerEntryRecord } from './entries.ts';

/** Where the entries come from: the database, or the running server's admin API (the CLI on an embedded database). */
export interface EntrySource {
  balancesBefore(companyId: string, at: Date): Promise<Map<string, Decimal>>;
  entryPage(companyId: string, range: ExportRange, after: EntryKey | null, limit: number): Promise<LedgerEntryRecord[]>;
  companyOfEntry(entryId: string): Promise<string | null>;
}

export const databaseEntrySource = (db: Db): EntrySource => ({
  balancesBefore: (companyId, at) => balancesBefore(db, companyId, at),
  entryPage: (companyId, range, after, limit) => readEntryPage(db, companyId, range, after, limit),
  companyOfEntry: (entryId) => companyOfEntry(db, entryId),
});

export interface ExportProblem {
  /**
   * header: not a ledger export's columns; format: a row that cannot be read; order: not after the row before it;
   * mismatch: a cell differs from its entry; unknown: no entry of the company and range is this row; missing: an
   * entry of the range has no row; company: the company cannot be known.
   */
  check: 'header' | 'format' | 'order' | 'mismatch' | 'unknown' | 'missing' | 'company';
  /** Line of the file (1 is the header); null for a missing entry. */
  line: number | null;
  entryId: string | null;
  column?: string;
  expected: string;
  actual: string;
}

export interface ExportReport {
  ok: boolean;
  companyId: string | null;
  from: string;
  to: string;
  /** Data rows read from the file. */
  rows: number;
  /** Entries of the company in the range. */
  entries: number;
  /** How many problems there are; `problems` lists the first MAX_LISTED. */
  problemCount: number;
  problems: ExportProblem[];
}

const MAX_LISTED = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface VerifyExportOptions extends ExportRange {
  /** The company the export is of; by default that of the first row's entry. */
  companyId?: string | null;
  /** Entries read per page (default 1,000). */
  batchSize?: number;
}

/** `records`: the file's records as parsed (the header first). */
export async function verifyLedgerExport(source: EntrySource, records: AsyncIterable<string[]>, options: VerifyExportOptions): Promise<ExportReport> {
  const range = { from: options.from, to: options.to };
  const problems: ExportProblem[] = [];
  let problemCount = 0;
  const report = (p: ExportProblem) => {
    problemCount++;
    if (problems.length < MAX_LISTED) problems.push(p);
  };
  let rows = 0;
  let entries = 0;
  const done = (companyId: string | null): ExportReport => ({
    ok: problemCount === 0,
    companyId,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    rows,
    entries,
    problemCount,
    problems,
  });

  const file = records[Symbol.asyncIterator]();
  const header = await file.next();
  const expectedHeader = LEDGER_COLUMNS.join(',');
  if (header.done || header.value.join(',') !== expectedHeader) {
    report({ check: 'header', line: 1, entryId: null, expected: expectedHeader, actual: header.done ? '(empty file)' : header.value.join(',') });
    return done(null);
  }
  let first = await file.next();
  const companyId = options.companyId ?? (first.done ? null : await source.companyOfEntry(first.value[0] ?? ''));
  if (!companyId) {
    report({
      check: 'company',
      line: first.done ? null : 2,
      entryId: first.done ? null : (first.value[0] ?? null),
      expected: 'the company of the export (--company, or a first row that is an entry)',
      actual: first.done ? 'a file without rows' : 'no entry has the first row’s id',
    });
    return done(null);
  }

  const batchSize = options.batchSize ?? 1_000;
  const balances = new RunningBalances(await source.balancesBefore(companyId, range.from));
  // The entries of the range, in order, a page at a time.
  let page: LedgerEntryRecord[] = [];
  let index = 0;
  let exhausted = false;
  const current = async (): Promise<LedgerEntryRecord | null> => {
    if (index < page.length) return page[index]!;
    if (exhausted) return null;
    const after = page.length ? page[page.length - 1]! : null;
    page = await source.entryPage(companyId, range, after, batchSize);
    index = 0;
    if (page.length < batchSize) exhausted = true;
    return page[0] ?? null;
  };
  const missing = (e: LedgerEntryRecord) => {
    balances.add(e);
    report({ check: 'missing', line: null, entryId: e.id, expected: `a row for entry ${e.id} (${e.createdAt.toISOString()})`, actual: 'none' });
  };

  let previous: EntryKey | null = null;
  for (let line = 2; !first.done; line++, first = await file.next()) {
    rows++;
    const cells = first.value;
    const [id = '', at = ''] = cells;
    if (cells.length !== LEDGER_COLUMNS.length || !UUID.test(id) || !ISO_MS.test(at) || Number.isNaN(Date.parse(at))) {
      report({ check: 'format', line, entryId: id || null, expected: `${LEDGER_COLUMNS.length} cells, an entry id and a time like 2026-01-01T00:00:00.000Z`, actual: cells.join(',').slice(0, 300) });
      continue;
    }
    const key = { createdAt: new Date(at), id };
    if (previous && compareKeys(previous, key) >= 0) {
      report({ check: 'order', line, entryId: id, expected: `after ${previous.createdAt.toISOString()} ${previous.id}`, actual: `${at} ${id}` });
    }
    previous = key;
    let entry = await current();
    while (entry && compareKeys(entry, key) < 0) {
      missing(entry);
      entries++;
      index++;
      entry = await current();
    }
    if (!entry || compareKeys(entry, key) > 0) {
      report({ check: 'unknown', line, entryId: id, expected: 'an entry of the company in the range', actual: `no entry ${id} at ${at}` });
      continue;
    }
    entries++;
    index++;
    const expected = ledgerCells(entry, balances.add(entry));
    expected.forEach((value, i) => {
      if (cells[i] !== value) report({ check: 'mismatch', line, entryId: id, column: LEDGER_COLUMNS[i], expected: value, actual: cells[i] ?? '' });
    });
  }
  for (let entry = await current(); entry; index++, entry = await current()) {
    missing(entry);
    entries++;
  }
  return done(companyId);
}
