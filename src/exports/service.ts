// Exports of a company's ledger and invoices as CSV streams, and the short-lived links that serve them to a browser.
import { createHash, randomBytes } from 'node:crypto';
import type { Company } from '../core/auth.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { exportFileName, type ExportKind, type ExportRange } from '../domain/exports.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { LEDGER_COLUMNS } from '../ledger/entries.ts';
import { csvChunks } from './csv.ts';
import { INVOICE_COLUMNS, invoiceCsvRows } from './invoices.ts';
import { ledgerCsvRows } from './ledger.ts';

export interface ExportDeps {
  db: Db;
  clock: Clock;
  /** Rows per query (EXPORT_BATCH_SIZE). */
  batchSize: number;
  linkTtlMs: number;
  /** Download links are absolute URLs under it (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
}

export interface ExportRequest extends ExportRange {
  companyId: string;
  kind: ExportKind;
}

export interface ExportFile {
  fileName: string;
  /** The CSV text, chunk by chunk (a page of rows each), read from the database as it is consumed. */
  chunks: AsyncIterable<string>;
}

export function exportFile(deps: Pick<ExportDeps, 'db' | 'batchSize'>, request: ExportRequest): ExportFile {
  const { companyId, kind } = request;
  const range = { from: request.from, to: request.to };
  const chunks =
    kind === 'ledger'
      ? csvChunks(LEDGER_COLUMNS, ledgerCsvRows(deps.db, companyId, range, deps.batchSize))
      : csvChunks(INVOICE_COLUMNS, invoiceCsvRows(deps.db, companyId, range, deps.batchSize));
  return { fileName: exportFileName(kind, range), chunks };
}

export interface ExportLink extends ExportRange {
  url: string;
  kind: ExportKind;
  expiresAt: Date;
}

/** Where links are served: GET /api/exports/<token>. */
export const EXPORT_LINK_PATH = '/api/exports';
// 32 random bytes in base64url: 256 bits, unguessable; only their hash is stored.
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** A link to download one export of the company without the Authorization header, until it expires (real time). */
export async function createExportLink(deps: ExportDeps, company: Company, kind: ExportKind, range: ExportRange): Promise<ExportLink> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(deps.clock.real().getTime() + deps.linkTtlMs);
  await deps.db.exportLink.create({ data: { tokenHash: hashOf(token), companyId: company.id, kind, from: range.from, to: range.to, expiresAt } });
  return { url: `${deps.publicBaseUrl}${EXPORT_LINK_PATH}/${token}`, kind, from: range.from, to: range.to, expiresAt };
}

/**
 * The export a link serves. Unknown, malformed and expired tokens are alike (404), and so is a link of another
 * company when the caller names itself with a token: a link is for its own company only.
 */
export async function linkedExport(deps: ExportDeps, token: string, caller: Company | null): Promise<ExportRequest> {
  const link = TOKEN.test(token) ? await deps.db.exportLink.findUnique({ where: { tokenHash: hashOf(token) } }) : null;
  if (!link || link.expiresAt <= deps.clock.real() || (caller && caller.id !== link.companyId)) {
    throw new NotFoundError('No export link with this token, or it expired; create a new one (createExportLink)');
  }
  return { companyId: link.companyId, kind: link.kind as ExportKind, from: link.from, to: link.to };
}

/** Deletes links that expired before `now` (the pruner job). */
export async function pruneExportLinks(db: Db, now: Date): Promise<number> {
  return (await db.exportLink.deleteMany({ where: { expiresAt: { lte: now } } })).count;
}
