// Building blocks of the response schemas (the OpenAPI document, docs/openapi.md): how the REST API writes amounts,
// instants and cursors. Each feature's presenter module holds the zod schema of the bodies it produces.
import { z } from 'zod';

/** An amount or rate we computed: exact digits, no exponent, as a string (formatPlain / formatFixed). */
export const decimalString = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .meta({ id: 'DecimalString', description: 'An exact decimal as a string: digits, an optional sign and point, never an exponent.' });

/** A JSON number written with the exact digits of a stored decimal (where the spec says number). */
export const exactNumber = z.number().meta({ description: 'A decimal written as a JSON number with its exact digits (read it with a decimal-aware JSON parser to keep them).' });

/** An instant as REST writes it: ISO 8601 with milliseconds and Z. */
export const isoInstant = z.iso.datetime().meta({ example: '2026-11-21T10:00:00.000Z' });

/** The cursor of the next page, null on the last one. */
export const nextCursor = z.string().nullable().meta({ description: 'Pass as `after` to read the next page; null on the last page.' });
