// The edge check every untrusted value passes before any feature sees it (REST bodies, path and query
// parameters, GraphQL requests over HTTP and WebSocket, their variables and literals): bytes that are not UTF-8,
// text PostgreSQL cannot store or that is not valid Unicode, and nesting deeper than any request of ours needs.
// Features validate meaning; this validates that it is text.
import { DecimalLiteral } from '../core/json.ts';
import { AppError, type ErrorDetail } from '../errors/app-error.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes as text. Invalid UTF-8 is refused with MALFORMED_REQUEST ("`what` is not valid UTF-8"), never read as
 * U+FFFD: a lenient decoder would store the replacement characters as if the client had sent them.
 */
export function utf8Text(bytes: Uint8Array, what: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new AppError('MALFORMED_REQUEST', `${what} is not valid UTF-8`);
  }
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The same check for form-encoded text (a query string, an x-www-form-urlencoded body): its percent-escapes must
 * spell valid UTF-8, which URLSearchParams would otherwise read as U+FFFD. A `%` without two hex digits after it
 * stays itself, as URLSearchParams reads it.
 */
export function checkFormEncodedUtf8(encoded: string, what: string): void {
  if (!encoded.includes('%')) return;
  const raw = Buffer.from(encoded, 'utf8');
  const bytes = Buffer.allocUnsafe(raw.length);
  let length = 0;
  for (let i = 0; i < raw.length; i++) {
    const hex = raw[i] === 0x25 ? raw.toString('latin1', i + 1, i + 3) : '';
    if (HEX.test(hex)) {
      bytes[length++] = parseInt(hex, 16);
      i += 2;
    } else bytes[length++] = raw[i]!;
  }
  utf8Text(bytes.subarray(0, length), what);
}

/** Deeper JSON than this is never a valid request here; walking it is refused early. */
export const MAX_INPUT_DEPTH = 32;

/** What is wrong with a string as text, or null. NUL cannot be stored; a lone surrogate is not Unicode. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!value.isWellFormed()) return 'must be valid Unicode (no unpaired surrogates)';
  return null;
}

/** The first problem in a parsed JSON value (keys included), with the dotted path of where it is. */
export function findInputProblem(value: unknown, path: string[] = []): ErrorDetail | null {
  if (path.length > MAX_INPUT_DEPTH) return { path: path.join('.'), message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` };
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path: path.join('.'), message: problem } : null;
  }
  if (value === null || typeof value !== 'object' || value instanceof DecimalLiteral) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInputProblem(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return { path: [...path, key.replace(/[\u0000\uD800-\uDFFF]/g, '?')].join('.'), message: `has a key that ${keyProblem}` };
    const found = findInputProblem(child, [...path, key]);
    if (found) return found;
  }
  return null;
}
