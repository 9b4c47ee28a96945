import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors/app-error.ts';
import { JsonText, parseJsonExact } from '../core/json.ts';
import { bodyTooLarge, checkDeclaredLength } from './edge.ts';
import { utf8Text } from './input-guard.ts';

/** Reads the whole body, refusing more than `limit` bytes (413) without buffering the excess. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  checkDeclaredLength(req.headers, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw bodyTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}


/** JSON bodies only; an empty body is `undefined` so validation can name the missing fields. */
export function parseJsonBody(req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as JSON with `Content-Type: application/json`');
  }
  const text = utf8Text(raw, 'The request body');
  try {
    return parseJsonExact(text);
  } catch (e) {
    throw new AppError('MALFORMED_REQUEST', `The request body is not valid JSON: ${(e as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = body === undefined ? '' : body instanceof JsonText ? body.text : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    ...(payload ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export interface ErrorBody {
  error: { code: string; message: string; details: ErrorDetail[]; requestId: string };
}

/** The one error shape of every REST answer that is not a success (docs/errors.md). */
export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).meta({ description: 'Stable, for programs (docs/errors.md lists them with their statuses).' }),
      message: z.string().meta({ description: 'For people; may change.' }),
      details: z
        .array(
          z.strictObject({
            path: z.string().meta({ description: 'Dotted path of the offending field (`items.2.price`); empty when the problem is not about one field.' }),
            message: z.string(),
          }),
        )
        .meta({ description: 'Every problem found in the input at once; empty when not about fields.' }),
      requestId: z.string().meta({ description: 'Also the X-Request-Id header: quote it when reporting a problem.' }),
    }),
  })
  .meta({
    id: 'Error',
    description: 'The one error shape of the REST API, whatever the endpoint.',
    example: {
      error: {
        code: 'VALIDATION_FAILED',
        message: 'The request is invalid',
        details: [{ path: 'items.0.price', message: 'must be a decimal number' }],
        requestId: '5b0a3f0e-8d0e-4a8e-9a43-2f3f7d1f2a11',
      },
    },
  }) satisfies z.ZodType<ErrorBody>;

export function errorBody(error: AppError, requestId: string): ErrorBody {
  return { error: { code: error.code, message: error.message, details: error.details, requestId } };
}

/**
 * Writes a streamed body (RestResponse.stream) with backpressure: a chunk is asked for only once the client took
 * the previous one (the socket drained), and none once the client went away, when the source is closed
 * (`return()`: a generator's `finally` runs, no further query starts). Until the first chunk nothing is sent, so a
 * failure there throws and the caller answers an ordinary error. A failure after it cuts the connection: the client
 * sees a broken transfer (no final chunk), never a short body that looks complete.
 */
export async function sendStream(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  chunks: AsyncIterable<string>,
  onFailure: (error: unknown, clientGone: boolean) => void,
): Promise<'complete' | 'client-gone' | 'failed'> {
  const source = chunks[Symbol.asyncIterator]();
  // Listened for before the first chunk is asked for: a client that leaves while it is made (a long first query)
  // must not leave this waiting for a drain that never comes.
  let closed = res.destroyed;
  const onClose = () => {
    closed = true;
  };
  res.once('close', onClose);
  let step: IteratorResult<string> = { done: false, value: '' };
  let started = false;
  try {
    step = await source.next();
    if (closed) return 'client-gone';
    res.writeHead(status, headers);
    started = true;
    while (!step.done && !closed) {
      if (!res.write(step.value) && !closed) await drainedOrClosed(res);
      if (closed) break;
      step = await source.next();
    }
    if (closed) return 'client-gone';
    res.end();
    return 'complete';
  } catch (e) {
    // Before the first byte: the caller answers an ordinary error.
    if (!started) throw e;
    onFailure(e, closed);
    res.destroy();
    return 'failed';
  } finally {
    res.off('close', onClose);
    if (!step.done) await source.return?.().catch(() => undefined);
  }
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
