// What REST and GraphQL share at the edge: one body limit, one mapping of failures to the error vocabulary, one
// way to authenticate (core/auth.ts).
import type { IncomingHttpHeaders } from 'node:http';
import { isTransientTransactionError } from '../db/client.ts';
import { AppError, RateLimitedError } from '../errors/app-error.ts';

/** Refuses a request whose declared body is over the limit (413) before a byte of it is read. */
export function checkDeclaredLength(headers: IncomingHttpHeaders, limit: number, options: { required?: boolean } = {}): void {
  const raw = headers['content-length'];
  if (raw === undefined) {
    if (options.required) throw new AppError('LENGTH_REQUIRED', 'Send a Content-Length header with GraphQL POST requests');
    return;
  }
  const declared = Number(raw);
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(limit);
}

export const bodyTooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limit} bytes`);

/**
 * Any failure as the error the client sees: AppErrors as they are, a busy database as 503 (retry), anything
 * else as 500 — reported through `onInternal`, since it is a bug.
 */
export function clientError(e: unknown, onInternal: (e: unknown) => void): AppError {
  if (e instanceof AppError) return e;
  if (isTransientTransactionError(e)) return new AppError('SERVICE_UNAVAILABLE', 'The database is busy; retry the request');
  onInternal(e);
  return new AppError('INTERNAL', 'Internal error; the request id identifies it in the logs');
}

/** Headers that go with an error status: how to authenticate, when to retry, that the connection ends. */
export function errorHeaders(error: AppError): Record<string, string> {
  if (error.status === 401) return { 'www-authenticate': 'Bearer' };
  if (error.status === 503) return { 'retry-after': '1' };
  if (error instanceof RateLimitedError) return { 'retry-after': String(error.retryAfterSeconds) };
  // Drop the rest of an oversized upload instead of reading it.
  if (error.status === 413) return { connection: 'close' };
  return {};
}
