import { z } from 'zod';
import { ValidationError, type ErrorDetail } from './errors/app-error.ts';
import { DecimalLiteral } from './http/json-body.ts';

/**
 * A plain (non-money) JSON number: REST bodies keep non-integers as DecimalLiteral (see json-body.ts); a
 * quantity such as minutes may be read as a float.
 */
export const quantity = () =>
  z.preprocess((v) => (v instanceof DecimalLiteral ? Number(v.text) : v), z.number({ message: 'must be a number' }).finite());

export const zodIssuesToDetails = (issues: z.core.$ZodIssue[]): ErrorDetail[] =>
  issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));

/** Parses untrusted input with a zod schema; a ValidationError lists every problem with its field path. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(zodIssuesToDetails(result.error.issues));
  return result.data;
}
