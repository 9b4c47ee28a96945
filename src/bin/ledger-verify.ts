// npm run ledger:verify [-- --mode test|live] — recomputes every balance from ledger entries and chain records, and
// asks the real chain nodes (CHAINS_FILE) whether our watched addresses hold what the records say; exit 1 on any
// mismatch (of the mode named, else of either; the report has each mode's summary).
//
// npm run ledger:verify -- --export <file.csv> [--from <instant> --to <instant>] [--company <id>] — checks a ledger
// export against the ledger (src/ledger/verify-export.ts): the range is the options' or the one the file's name
// states (as the API names it); the company is the option's or that of the first row's entry. Exit 0 when the file
// is exactly the ledger of its range, 1 with the problems listed, 2 on a usage error.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse';
import '../autoswap/ledger-checks.ts';
import { readChainsFile } from '../chains/config.ts';
import { openChains } from '../chains/registry.ts';
import { loadConfigOrExit } from '../config.ts';
import { parseInstant } from '../core/validation.ts';
import { parseExportFileName, type ExportRange } from '../domain/exports.ts';
import { Money } from '../domain/money.ts';
import { isMode } from '../domain/modes.ts';
import type { EntryKey, LedgerEntryRecord } from '../ledger/entries.ts';
import { databaseEntrySource, verifyLedgerExport, type EntrySource, type ExportReport } from '../ledger/verify-export.ts';
import type { LedgerReport } from '../ledger/verify.ts';
import { createLogger } from '../logger.ts';
import { fail, runAdminRequest, withDatabase, type AdminCall } from './cli.ts';

const USAGE =
  'usage: npm run ledger:verify [-- --mode test|live] | [-- --export <file.csv> [--from <ISO 8601 instant> --to <ISO 8601 instant>] [--company <company id>]]';

let options: { export?: string | undefined; from?: string | undefined; to?: string | undefined; company?: string | undefined; mode?: string | undefined };
try {
  options = parseArgs({ options: { export: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, company: { type: 'string' }, mode: { type: 'string' } } }).values;
} catch (e) {
  fail(`${(e as Error).message}\n${USAGE}`);
}

if (options.export === undefined) {
  if (options.from ?? options.to ?? options.company) fail(`--from, --to and --company go with --export\n${USAGE}`);
  const mode = options.mode ?? null;
  if (mode !== null && !isMode(mode)) fail(`--mode must be test or live\n${USAGE}`);
  const config = loadConfigOrExit();
  const report = (await runAdminRequest(
    { method: 'GET', path: `/admin/ledger/verify${mode ? `?mode=${mode}` : ''}` },
    async (db) => {
      const chains = await openChains({ file: readChainsFile(config.chainsFile), sandbox: config.sandbox, db, logger: createLogger('silent'), signer: null });
      // Loaded only here: the features' checks need every feature's module, which usage errors and the admin path do not.
      const { verifyLedger } = await import('../features.ts');
      return verifyLedger(db, chains.custodySources(), { mode });
    },
    'ledger:verify',
  )) as LedgerReport;
  if (report.custodySurpluses?.length) {
    process.stderr.write(`note: ${report.custodySurpluses.length} watched address(es) hold more than was credited to them (custodySurpluses): refused dust or assets, or late payments; see docs/chains.md\n`);
  }
  process.exit(report.ok ? 0 : 1);
} else {
  if (options.mode !== undefined) fail(`--mode goes without --export (an export is one mode's already)\n${USAGE}`);
  const report = await verifyExportFile(options.export, options);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exit(report.ok ? 0 : 1);
}

async function verifyExportFile(file: string, o: typeof options): Promise<ExportReport & { file: string }> {
  if (!fs.existsSync(file)) fail(`${file}: no such file`);
  const range = rangeOf(file, o);
  if (o.company !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(o.company)) fail(`--company must be a company id (a uuid)\n${USAGE}`);
  const verify = async (source: EntrySource): Promise<ExportReport> => {
    // BOM tolerated (a spreadsheet may add one on saving); rows of another length are reported, not fatal.
    const records = fs.createReadStream(file).pipe(parse({ bom: true, relax_column_count: true }));
    try {
      return await verifyLedgerExport(source, records, { ...range, companyId: o.company ?? null });
    } catch (e) {
      if ((e as { code?: string }).code?.startsWith('CSV_')) {
        const problem = { check: 'format' as const, line: (e as { lines?: number }).lines ?? null, entryId: null, expected: 'RFC 4180 CSV', actual: (e as Error).message };
        return { ok: false, companyId: o.company ?? null, from: range.from.toISOString(), to: range.to.toISOString(), rows: 0, entries: 0, problemCount: 1, problems: [problem] };
      }
      throw e;
    } finally {
      records.destroy();
    }
  };
  const report = await withDatabase('ledger:verify', (call) => verify(adminEntrySource(call)), (db) => verify(databaseEntrySource(db)));
  return { file: path.resolve(file), ...report };
}

/** The range from --from/--to, else from the file's name as the API gave it. */
function rangeOf(file: string, o: typeof options): ExportRange {
  if (o.from !== undefined || o.to !== undefined) {
    const from = o.from === undefined ? null : parseInstant(o.from);
    const to = o.to === undefined ? null : parseInstant(o.to);
    if (!from || !to) fail(`--from and --to must both be ISO 8601 instants with a zone (years 0001-9999)\n${USAGE}`);
    if (from >= to) fail('--to must be after --from');
    return { from, to };
  }
  const named = parseExportFileName(path.basename(file));
  if (!named) fail(`${path.basename(file)} is not named as the API names a ledger export (ledger_<from>_<to>.csv): give --from and --to\n${USAGE}`);
  if (named.kind !== 'ledger') fail(`${path.basename(file)} is an ${named.kind} export; ledger:verify checks ledger exports`);
  return { from: named.from, to: named.to };
}

/** The entries through the running server's admin API (the server holds the embedded database). */
function adminEntrySource(call: AdminCall): EntrySource {
  const query = (params: Record<string, string>) => new URLSearchParams(params).toString();
  return {
    async balancesBefore(companyId, at) {
      const totals = (await call({ method: 'GET', path: `/admin/ledger/balances-before?${query({ companyId, at: at.toISOString() })}` })) as Record<string, string>;
      return new Map(Object.entries(totals).map(([k, v]) => [k, new Money(v)]));
    },
    async entryPage(companyId, range, after: EntryKey | null, limit) {
      const params = { companyId, from: range.from.toISOString(), to: range.to.toISOString(), limit: String(limit), ...(after ? { afterCreatedAt: after.createdAt.toISOString(), afterId: after.id } : {}) };
      const page = (await call({ method: 'GET', path: `/admin/ledger/entries?${query(params)}` })) as (Omit<LedgerEntryRecord, 'createdAt' | 'amount'> & { createdAt: string; amount: string })[];
      return page.map((e) => ({ ...e, createdAt: new Date(e.createdAt), amount: new Money(e.amount) }));
    },
    async companyOfEntry(entryId) {
      return ((await call({ method: 'GET', path: `/admin/ledger/entries/${encodeURIComponent(entryId)}/company` })) as { companyId: string | null }).companyId;
    },
  };
}
