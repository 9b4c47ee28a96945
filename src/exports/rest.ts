// GET /api/company/exports/{ledger,invoices}.csv for the caller's company, and GET /api/exports/<token> for a link.
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import type { ExportKind } from '../domain/exports.ts';
import { route, type RestResponse, type Route, type RouteDoc } from '../http/router.ts';
import { exportRangeSchema } from './range.ts';
import { EXPORT_LINK_PATH, exportFile, linkedExport, type ExportDeps, type ExportRequest } from './service.ts';

const CSV = 'text/csv; charset=utf-8';

function csvResponse(deps: ExportDeps, request: ExportRequest): RestResponse {
  const file = exportFile(deps, request);
  return {
    status: 200,
    stream: file.chunks,
    headers: {
      'content-type': CSV,
      'content-disposition': `attachment; filename="${file.fileName}"`,
      // Private figures: no cache keeps a copy, and no browser guesses another type.
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  };
}

const FILE_HEADERS = {
  'Content-Disposition': 'attachment; filename="<kind>_<from>_<to>.csv" (instants as 20260101T000000000Z)',
  'Cache-Control': 'no-store',
};

const TRANSFER_NOTE =
  'Streamed (chunked) while it is read from the database; a failure after the first byte cuts the connection, so an incomplete file never looks complete. docs/exports.md.';

const csvDoc = (kind: ExportKind, summary: string, columns: string): RouteDoc => ({
  summary,
  description: `Range: \`from\` inclusive, \`to\` exclusive, both required ISO 8601 instants with a zone. ${columns} ${TRANSFER_NOTE}`,
  tag: 'Exports',
  responses: { 200: { description: `RFC 4180 CSV with a header row and CRLF line ends: the ${kind} export.`, contentType: CSV, headers: FILE_HEADERS } },
});

const tokenParam = z.string().describe('The token of a link from the GraphQL mutation createExportLink.');

export const exportRoutes: Route<Services>[] = (['ledger', 'invoices'] as const).map((kind) =>
  route({
    method: 'GET',
    path: `/api/company/exports/${kind}.csv`,
    auth: 'required',
    scope: 'exports:read',
    query: exportRangeSchema,
    doc:
      kind === 'ledger'
        ? csvDoc(
            kind,
            'Download the ledger entries of a range as CSV',
            'One row per ledger entry created in the range, in (created_at, entry_id) order, with the balance of its asset and account after it, its source object and chain transaction hash.',
          )
        : csvDoc(kind, 'Download the invoices created in a range as CSV', 'One row per invoice created in the range, in (created_at, invoice_id) order.'),
    handler: async (req, ctx) => csvResponse(ctx.exports, { companyId: req.company!.id, kind, ...req.query }),
  }),
);

exportRoutes.push(
  route({
    method: 'GET',
    path: `${EXPORT_LINK_PATH}/:token`,
    // A browser follows the link without the header; a caller that sends a token must be the link's company.
    auth: 'optional',
    scope: 'exports:read',
    doc: {
      summary: 'Download the export a link names (no Authorization header needed)',
      description: `The URL answered by the GraphQL mutation createExportLink, valid for EXPORT_LINK_TTL_SECONDS (15 minutes by default); unknown and expired links answer 404. ${TRANSFER_NOTE}`,
      tag: 'Exports',
      params: { token: tokenParam },
      responses: { 200: { description: 'The export the link was made for (ledger or invoices CSV).', contentType: CSV, headers: FILE_HEADERS } },
      errors: [404],
    },
    handler: async (req, ctx) => csvResponse(ctx.exports, await linkedExport(ctx.exports, req.params['token']!, req.company)),
  }),
);
