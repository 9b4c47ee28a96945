// createExportLink: the GraphQL way to an export. GraphQL answers JSON, so it answers a short-lived link that the same
// streaming code serves (GET /api/exports/<token>), which a browser can follow without the Authorization header.
import { parseInput } from '../core/validation.ts';
import { EXPORT_KINDS, exportFileName, type ExportKind } from '../domain/exports.ts';
import { ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { exportRangeSchema } from './range.ts';
import { createExportLink, type ExportLink } from './service.ts';

const ExportKindEnum = builder.enumType('ExportKind', {
  description: 'What an export holds.',
  values: {
    LEDGER: { value: 'ledger', description: 'Every ledger entry of the range with its balance after (REST GET /api/company/exports/ledger.csv).' },
    INVOICES: { value: 'invoices', description: 'Every invoice created in the range (REST GET /api/company/exports/invoices.csv).' },
  } as const satisfies Record<string, { value: (typeof EXPORT_KINDS)[number]; description: string }>,
});

const ExportLinkType = builder.objectRef<ExportLink>('ExportLink').implement({
  description: 'A download link for one CSV export of the calling merchant; it needs no Authorization header and expires soon.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Where to download the CSV (GET); unknown or expired links answer 404.' }),
    kind: t.field({ type: ExportKindEnum, description: 'What the file holds.', resolve: (l) => l.kind }),
    from: t.expose('from', { type: 'DateTime', description: 'Start of the range, inclusive.' }),
    to: t.expose('to', { type: 'DateTime', description: 'End of the range, exclusive.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'The link works until then (EXPORT_LINK_TTL_SECONDS after it was made).' }),
    fileName: t.string({ description: 'The name the download is saved under (kind and range).', resolve: (l) => exportFileName(l.kind, l) }),
  }),
});

const CreateExportLinkInput = builder.inputType('CreateExportLinkInput', {
  description: 'Which export, over which range.',
  fields: (t) => ({
    kind: t.field({ type: ExportKindEnum, required: true, description: 'The ledger or the invoices.' }),
    from: t.field({ type: 'DateTime', required: true, description: 'Start of the range, inclusive.' }),
    to: t.field({ type: 'DateTime', required: true, description: 'End of the range, exclusive; after `from`.' }),
  }),
});

builder.mutationField('createExportLink', (t) =>
  t.field({
    type: ExportLinkType,
    authScopes: { scope: 'exports:read' },
    description: 'Makes a short-lived link to download a CSV export of the calling merchant (docs/exports.md).',
    errors: mutationOutcome('link', 'The download link.', [ValidationError]),
    args: { input: t.arg({ type: CreateExportLinkInput, required: true, description: 'The export to link to.' }) },
    resolve: async (_root, { input }, ctx) => {
      // The REST query's schema: the same rules for the range, whichever way it came.
      const range = parseInput(exportRangeSchema, { from: input.from.toISOString(), to: input.to.toISOString() });
      return createExportLink(ctx.exports, ctx.company!, input.kind as ExportKind, range);
    },
  }),
);
