// Idempotency-Key for any operation: the first request with a key does the work and stores a reference to its
// answer in the same transaction; a repeat with the same body gets that answer again and changes nothing; the same
// key with another body or operation is refused. Keys expire (the pruner deletes them) and may then be reused.
import { createHash } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { z } from 'zod';
import { Prisma } from '../../generated/prisma/client.ts';
import { ConflictError, AppError, ValidationError } from '../errors/app-error.ts';
import { commitWithEvents, noteEvents, type EventDeps } from './events.ts';

type Tx = Prisma.TransactionClient;

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

/** The header's value as the OpenAPI document shows it (checkIdempotencyKey applies the same pattern). */
export const idempotencyKeySchema = z.string().regex(KEY_PATTERN).meta({ example: 'order-1042' });

export interface IdempotentRequest {
  companyId: string;
  /** The client's key; null or undefined runs the operation without one. */
  key: string | null | undefined;
  /** e.g. `createInvoice`, `withdraw`: a key used for one operation cannot be replayed by another. */
  operation: string;
  /** The validated input; its canonical JSON (decimals as plain digits) is the request's fingerprint. */
  input: unknown;
  ttlMs: number;
}

export interface IdempotentSteps<T> {
  /**
   * The work, in the transaction that stores the key; `stored` is what a replay needs to rebuild the answer, `events`
   * the types of the events it recorded through eventCtes/eventsCtes (counted once it commits: CommitSignal).
   */
  execute(tx: Tx): Promise<{ result: T; stored: Prisma.InputJsonObject; events?: readonly string[] }>;
  /** `execute` is one statement: without a key it needs no transaction around it (a round trip each way less). */
  singleStatement?: boolean;
  replay(stored: Prisma.JsonValue): Promise<T>;
}

/** Checks an Idempotency-Key header value before any work. */
export function checkIdempotencyKey(key: string | null | undefined): void {
  if (key != null && !KEY_PATTERN.test(key)) {
    throw new ValidationError([{ path: 'Idempotency-Key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters` }]);
  }
}

export function fingerprint(input: unknown): string {
  // The holder's raw value: by the time a replacer sees a Decimal, toJSON() may have turned it into exponent form.
  const canonical = JSON.stringify(input, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return Decimal.isDecimal(raw) ? (raw as Decimal).toFixed() : value;
  });
  return createHash('sha256').update(canonical ?? 'null').digest('hex');
}

const isUniqueViolation = (e: unknown) => e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002';

export async function idempotent<T>(deps: EventDeps, request: IdempotentRequest, steps: IdempotentSteps<T>): Promise<{ result: T; replayed: boolean }> {
  const { key, companyId, operation } = request;
  checkIdempotencyKey(key);
  if (key == null) {
    if (steps.singleStatement) {
      const { result, events } = await steps.execute(deps.db);
      deps.events.committed(events);
      return { result, replayed: false };
    }
    const { result } = await commitWithEvents(deps, async (tx) => {
      const done = await steps.execute(tx);
      noteEvents(tx, done.events ?? []);
      return done;
    });
    return { result, replayed: false };
  }
  const hash = fingerprint(request.input);
  const replay = async (): Promise<{ result: T; replayed: true } | null> => {
    const prior = await deps.db.idempotencyKey.findUnique({ where: { companyId_key: { companyId, key } } });
    if (!prior || prior.expiresAt <= new Date()) return null;
    if (prior.operation !== operation || prior.requestHash !== hash) {
      throw new ConflictError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    return { result: await steps.replay(prior.responseBody), replayed: true };
  };

  const earlier = await replay();
  if (earlier) return earlier;
  try {
    const { result } = await commitWithEvents(deps, async (tx) => {
      // An expired key is free again.
      await tx.idempotencyKey.deleteMany({ where: { companyId, key, expiresAt: { lte: new Date() } } });
      // The key first, so a concurrent twin waits on this row and then fails on the unique key.
      await tx.idempotencyKey.create({
        data: { companyId, key, operation, requestHash: hash, responseBody: {}, expiresAt: new Date(Date.now() + request.ttlMs) },
      });
      const done = await steps.execute(tx);
      noteEvents(tx, done.events ?? []);
      await tx.idempotencyKey.update({ where: { companyId_key: { companyId, key } }, data: { responseBody: done.stored } });
      return done;
    });
    return { result, replayed: false };
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const twin = await replay();
    if (twin) return twin;
    throw new ConflictError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is in progress; retry later');
  }
}

/** Deletes expired keys; answers how many. */
export async function pruneIdempotencyKeys(deps: Pick<EventDeps, 'db'>): Promise<number> {
  const { count } = await deps.db.idempotencyKey.deleteMany({ where: { expiresAt: { lte: new Date() } } });
  return count;
}
