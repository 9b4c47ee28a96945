// The range of an export, from the query string (REST) or the mutation input (GraphQL): one schema for both.
import { z } from 'zod';
import { instant } from '../core/validation.ts';
import type { ExportRange } from '../domain/exports.ts';

/**
 * `from` inclusive, `to` exclusive, both required ISO 8601 instants with a zone (years 0001-9999, millisecond
 * precision as everywhere in the API), `from` before `to`. No defaults: a reconciliation is of a stated period, and
 * a file whose range is written down (its name) can be checked and produced again.
 */
export const exportRangeSchema = z
  .object({
    from: z.string({ message: 'is required: an ISO 8601 date-time with a zone' }).pipe(instant),
    to: z.string({ message: 'is required: an ISO 8601 date-time with a zone' }).pipe(instant),
  })
  .refine((r) => r.from < r.to, { path: ['to'], message: 'must be after `from`' }) satisfies z.ZodType<ExportRange>;
