// What an export file is named and how text cells are made safe for spreadsheets: shared by the exports feature,
// which writes the files, and ledger:verify, which reads them back.

export const EXPORT_KINDS = ['ledger', 'invoices'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** A half-open range of instants: `from` inclusive, `to` exclusive. */
export interface ExportRange {
  from: Date;
  to: Date;
}

// 2026-01-01T00:00:00.000Z -> 20260101T000000000Z: no `:` (not allowed in Windows file names), still sortable.
const compact = (d: Date) => d.toISOString().replace(/[-:.]/g, '');
const FILE_NAME = /^(ledger|invoices)_(\d{8}T\d{9}Z)_(\d{8}T\d{9}Z)\.csv$/;

/** `ledger_20260101T000000000Z_20260201T000000000Z.csv`: the kind and the exact range, so the file says what it holds. */
export const exportFileName = (kind: ExportKind, range: ExportRange) => `${kind}_${compact(range.from)}_${compact(range.to)}.csv`;

const instantOf = (c: string) => {
  const iso = `${c.slice(0, 4)}-${c.slice(4, 6)}-${c.slice(6, 8)}T${c.slice(9, 11)}:${c.slice(11, 13)}:${c.slice(13, 15)}.${c.slice(15, 18)}Z`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) || d.toISOString() !== iso ? null : d;
};

/** The kind and range of a file named by exportFileName (a renamed file: null). */
export function parseExportFileName(name: string): ({ kind: ExportKind } & ExportRange) | null {
  const m = FILE_NAME.exec(name);
  if (!m) return null;
  const from = instantOf(m[2]!);
  const to = instantOf(m[3]!);
  return from && to ? { kind: m[1] as ExportKind, from, to } : null;
}

// A cell starting with one of these is read as a formula by Excel, LibreOffice and Google Sheets (OWASP, "CSV
// Injection"); tab and carriage return too, as some of them skip those first.
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Text a client wrote (an e-mail address), made inert for spreadsheets: a leading `'` when it starts like a formula,
 * which spreadsheets show as text and hide. Only such text: amounts stay exact (a negative amount starts with `-`).
 */
export const spreadsheetText = (value: string): string => (FORMULA_START.test(value) ? `'${value}` : value);
