// Status changes are counted from the events a transaction noted, once it committed, and only for the attempt that
// committed: a retried attempt's notes are dropped, a rolled-back transaction counts nothing.
import { describe, expect, it } from 'vitest';
import { commitWithEvents, noteEvents } from '../../src/core/events.ts';
import type { Db } from '../../src/db/client.ts';
import { declared } from '../../src/features.ts';
import { MetricsRegistry } from '../../src/ops/metrics.ts';
import { transitionCounters } from '../../src/ops/transitions.ts';
import { createLogger } from '../../src/logger.ts';
import { parsePrometheus, seriesOf } from '../support/prometheus.ts';

/** A stand-in for PrismaClient: each $transaction runs the work on a new transaction object; `failures` fail attempts after the work ran. */
function fakeDb(failures: unknown[]) {
  return {
    $transaction: async (fn: (tx: object) => Promise<unknown>) => {
      const result = await fn({});
      const failure = failures.shift();
      if (failure) throw failure;
      return result;
    },
  } as unknown as Db;
}

describe('counting status changes where they commit', () => {
  it('tells the committed attempt’s event types, once, after the commit', async () => {
    const told: (readonly string[] | undefined)[] = [];
    const deps = { db: fakeDb([{ code: 'P2034' }]), events: { committed: (types?: readonly string[]) => void told.push(types) } };
    let attempts = 0;
    await commitWithEvents(deps, async (tx) => {
      attempts++;
      noteEvents(tx as never, [`invoice.attempt${attempts}`]);
      expect(told).toEqual([]);
    });
    expect(attempts).toBe(2);
    expect(told).toEqual([['invoice.attempt2']]);
  });

  it('tells nothing when the transaction fails for good, and notes outside a transaction go nowhere', async () => {
    const told: unknown[] = [];
    const deps = { db: fakeDb([new Error('constraint violated')]), events: { committed: (types?: readonly string[]) => void told.push(types) } };
    await expect(commitWithEvents(deps, async (tx) => noteEvents(tx as never, ['invoice.done']))).rejects.toThrow('constraint violated');
    expect(told).toEqual([]);
    noteEvents({} as never, ['invoice.done']);
    expect(told).toEqual([]);
  });

  it('counts statuses of the known subjects from 0, and ignores events that are no status change', async () => {
    const metrics = new MetricsRegistry(createLogger('silent'));
    const count = transitionCounters(metrics, declared);
    count(['invoice.created', 'invoice.done', 'invoice.done', 'invoice.late_payment', 'withdrawal.rejected', 'deposit.frozen', 'refund.sent', 'nonsense']);
    const families = parsePrometheus(await metrics.text());
    expect(seriesOf(families, 'payrail_invoice_transitions_total')).toEqual({
      'status=created': 1, 'status=pending': 0, 'status=processing': 0, 'status=done': 2, 'status=wrong': 0, 'status=refunded': 0, 'status=closed': 0,
    });
    expect(seriesOf(families, 'payrail_withdrawal_transitions_total')).toEqual({ 'status=processing': 0, 'status=done': 0, 'status=rejected': 1 });
    expect(seriesOf(families, 'payrail_deposit_transitions_total')).toEqual({ 'status=processing': 0, 'status=done': 0, 'status=failed': 0, 'status=frozen': 1 });
  });
});
