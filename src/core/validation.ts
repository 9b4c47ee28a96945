// Validation building blocks shared by every feature: one definition each of a decimal, a URL, an instant, an
// e-mail address and a sequence cursor, all bounded so that hostile input is refused before any work is done.
import fs from 'node:fs';
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { AMOUNT_COLUMN, readDecimal, type DecimalShape } from '../domain/money.ts';
import { ValidationError, type ErrorDetail } from '../errors/app-error.ts';
import { DecimalLiteral, parseJsonExact } from './json.ts';

export const zodIssuesToDetails = (issues: z.core.$ZodIssue[]): ErrorDetail[] =>
  issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));

/** Parses untrusted input with a zod schema; a ValidationError lists every problem with its field path. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(zodIssuesToDetails(result.error.issues));
  return result.data;
}

export interface DecimalOptions {
  /** The column the value is stored in (default Decimal(38,18)). */
  shape?: DecimalShape;
  /** Inclusive bounds. */
  min?: Decimal.Value;
  max?: Decimal.Value;
  /** Strictly greater than zero. */
  positive?: boolean;
}

/**
 * A JSON number as the body parser hands it over: a safe integer, or a DecimalLiteral with its exact digits. The
 * OpenAPI document shows it as what a client sends: a number.
 */
const jsonNumberInput = (message: string) =>
  z
    .custom<number | DecimalLiteral>((v) => (typeof v === 'number' && Number.isFinite(v)) || v instanceof DecimalLiteral, { message })
    .meta({ type: 'number' });

/** What a client may send as a decimal string (surrounding spaces are tolerated, not documented). */
export const DECIMAL_TEXT_PATTERN = '^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?$';

const boundsText = (options: DecimalOptions) =>
  [
    options.positive ? 'greater than 0' : null,
    options.min !== undefined ? `at least ${String(options.min)}` : null,
    options.max !== undefined ? `at most ${String(options.max)}` : null,
  ].filter(Boolean);

/**
 * A decimal given as a JSON number (its exact source text), a string, or a safe integer; read by the project's
 * one decimal parser, so it is bounded and fits its column.
 */
export const decimal = (options: DecimalOptions = {}) =>
  z
    .union([z.string().meta({ pattern: DECIMAL_TEXT_PATTERN }), jsonNumberInput('must be a decimal number')], { message: 'must be a decimal number' })
    .transform((raw, ctx) => {
      const reading = readDecimal(raw instanceof DecimalLiteral ? raw.text : String(raw), options.shape ?? AMOUNT_COLUMN);
      if (!reading.ok) {
        ctx.addIssue({ code: 'custom', message: reading.message });
        return z.NEVER;
      }
      const value = reading.value;
      const problem =
        options.positive && !value.gt(0)
          ? 'must be greater than 0'
          : options.min !== undefined && value.lt(options.min)
            ? `must be at least ${String(options.min)}`
            : options.max !== undefined && value.gt(options.max)
              ? `must be at most ${String(options.max)}`
              : null;
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return value;
    })
    .meta({
      description: [
        'A decimal: a JSON number (read exactly, never through a float) or a string of digits',
        `at most ${(options.shape ?? AMOUNT_COLUMN).integerDigits} digits before the point and ${(options.shape ?? AMOUNT_COLUMN).scale} after`,
        ...boundsText(options),
      ].join('; '),
    });

/** A plain number that is not money (minutes, say): read by the decimal parser, then used as a float. */
export const quantity = () =>
  jsonNumberInput('must be a number').transform((raw, ctx) => {
    if (typeof raw === 'number') return raw;
    const reading = readDecimal(raw.text);
    if (!reading.ok) {
      ctx.addIssue({ code: 'custom', message: reading.message });
      return z.NEVER;
    }
    return reading.value.toNumber();
  });

export const MAX_URL_LENGTH = 2048;

export const httpUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL without credentials')
  .meta({ format: 'uri', description: 'An absolute http(s) URL without credentials' });

/** An absolute https URL without credentials (a logo the checkout page loads: its CSP allows https images only). */
export const httpsUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'https:' && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an absolute https URL without credentials')
  .meta({ format: 'uri', description: 'An absolute https URL without credentials' });

export const MAX_EMAIL_LENGTH = 254;
export const email = z.email({ message: 'must be a valid e-mail address' }).max(MAX_EMAIL_LENGTH);

// RFC 3339 with a zone; years 0001-9999, the range both JavaScript and PostgreSQL hold without surprises.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An ISO 8601 instant (`2026-11-21T10:00:00.000Z`), or null when the text is not one or is out of range. */
export function parseInstant(text: string): Date | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Date() rolls 02-31 over to March: the day must survive the round trip (checked in UTC, before the offset).
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return null;
  const y = date.getUTCFullYear();
  return y >= 1 && y <= 9999 ? date : null;
}

export const INSTANT_MESSAGE = 'must be an ISO 8601 date-time with a zone between years 0001 and 9999, e.g. 2026-11-21T10:00:00.000Z';

export const instant = z
  .string()
  .transform((text, ctx) => {
    const date = parseInstant(text);
    if (!date) {
      ctx.addIssue({ code: 'custom', message: INSTANT_MESSAGE });
      return z.NEVER;
    }
    return date;
  })
  .meta({ format: 'date-time', description: 'An RFC 3339 instant with a zone, years 0001-9999', example: '2026-11-21T10:00:00.000Z' });

const MAX_BIGINT = 2n ** 63n - 1n;

/** A position in a bigint sequence (PostgreSQL BIGINT): 0 to 2^63-1. */
export const sequenceCursor = z
  .string()
  .transform((v, ctx) => {
    if (!/^\d{1,19}$/.test(v) || BigInt(v) > MAX_BIGINT) {
      ctx.addIssue({ code: 'custom', message: 'must be a cursor from a previous page' });
      return z.NEVER;
    }
    return BigInt(v);
  })
  .meta({ pattern: '^\\d{1,19}$', description: 'A cursor from a previous page (`nextCursor`)' });

/** A JSON file named by configuration, read exactly (numbers keep their digits) and checked by `schema`. */
export function readConfigFile<S extends z.ZodType>(schema: S, file: string): z.output<S> {
  let raw: unknown;
  try {
    raw = parseJsonExact(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * A deposit tag (the TON memo, a text comment): 1-120 printable ASCII characters without spaces at either
 * end. 120 keeps it within one TON cell; ASCII keeps it typeable and unambiguous on exchanges' forms.
 */
export const TAG_PATTERN = /^[\x21-\x7E](?:[\x20-\x7E]{0,118}[\x21-\x7E])?$/;
export const tag = z.string().regex(TAG_PATTERN, 'must be 1-120 printable ASCII characters without leading or trailing spaces');
