import { describe, expect, it } from 'vitest';
import { isTransientTransactionError, transactionWithRetry, type Db } from '../../src/db/client.ts';

/** A stand-in for PrismaClient whose $transaction fails with the given errors first. */
function flakyDb(failures: unknown[]) {
  let calls = 0;
  const db = {
    $transaction: async (fn: (tx: unknown) => Promise<unknown>) => {
      calls++;
      const failure = failures.shift();
      if (failure) throw failure;
      return fn({});
    },
  };
  return { db: db as unknown as Db, calls: () => calls };
}

describe('transactionWithRetry', () => {
  it('recognises deadlocks, serialization failures, write conflicts and start timeouts', () => {
    expect(isTransientTransactionError({ code: 'P2034' })).toBe(true);
    expect(isTransientTransactionError({ code: 'P2028' })).toBe(true);
    expect(isTransientTransactionError({ cause: { originalCode: '40P01' } })).toBe(true);
    expect(isTransientTransactionError({ cause: { originalCode: '40001' } })).toBe(true);
    expect(isTransientTransactionError(new Error('ERROR: deadlock detected'))).toBe(true);
    expect(isTransientTransactionError(new Error('unique constraint'))).toBe(false);
    expect(isTransientTransactionError({ code: 'P2002' })).toBe(false);
    expect(isTransientTransactionError(null)).toBe(false);
  });

  it('runs the work again after a transient failure', async () => {
    const { db, calls } = flakyDb([{ code: 'P2034' }, { cause: { originalCode: '40P01' } }]);
    await expect(transactionWithRetry(db, async () => 'done')).resolves.toBe('done');
    expect(calls()).toBe(3);
  });

  it('gives up after the last attempt and never retries other errors', async () => {
    const transient = flakyDb([{ code: 'P2034' }, { code: 'P2034' }, { code: 'P2034' }, { code: 'P2034' }]);
    await expect(transactionWithRetry(transient.db, async () => 'x')).rejects.toMatchObject({ code: 'P2034' });
    expect(transient.calls()).toBe(4);
    const fatal = flakyDb([new Error('constraint violated')]);
    await expect(transactionWithRetry(fatal.db, async () => 'x')).rejects.toThrow('constraint violated');
    expect(fatal.calls()).toBe(1);
  });
});
