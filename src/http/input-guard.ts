// The edge check every untrusted value passes before any feature sees it (REST bodies, path and query
// parameters, GraphQL variables and literals): text PostgreSQL cannot store or that is not valid Unicode, and
// nesting deeper than any request of ours needs. Features validate meaning; this validates that it is text.
import { DecimalLiteral } from '../core/json.ts';
import type { ErrorDetail } from '../errors/app-error.ts';

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
