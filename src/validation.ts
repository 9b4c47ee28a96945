import { z } from 'zod';
import { ValidationError, type ErrorDetail } from './errors/app-error.ts';

export const zodIssuesToDetails = (issues: z.core.$ZodIssue[]): ErrorDetail[] =>
  issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));

/** Parses untrusted input with a zod schema; a ValidationError lists every problem with its field path. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(zodIssuesToDetails(result.error.issues));
  return result.data;
}
