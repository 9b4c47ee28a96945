// Re-observes the statements the service issues (PostgreSQL only: it wraps pg's Client.query, which both
// Prisma's adapter and pg.Pool.query go through) and compares them with sql.ts, so the baseline cannot
// silently drift from what the service really does.
import pg from 'pg';
import { EXPECTED_STATEMENTS } from './sql.ts';

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;

/** Texts of every statement any pg client sends while `fn` runs (run nothing else meanwhile). */
export async function captureStatements(fn: () => Promise<void>): Promise<string[]> {
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  const seen: string[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    seen.push(typeof q === 'string' ? q : (q.text ?? ''));
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return seen;
}

export interface StatementCheck {
  operation: string;
  ok: boolean;
  /** Only kept when they differ from the expectation. */
  observed?: string[];
}

/** Same statements in the same order, except that the concurrent tail may come in any order. */
export function compareStatements(label: string, operation: keyof typeof EXPECTED_STATEMENTS, all: string[]): StatementCheck {
  // The token lookup only happens when the authenticator's 10 s cache is cold; it is not replayed.
  // The webhook worker's claim and the event bus (its read of new events, its NOTIFY to other processes) run
  // beside requests, woken by their commits, not inside them.
  const background = ['"publicTokenHash" = $1', 'SET "claimedUntil"', 'NOTIFY payrail_events', 'pg_current_snapshot()'];
  const observed = all.filter((s) => !background.some((b) => s.includes(b)));
  const expected = EXPECTED_STATEMENTS[operation];
  const concurrentTail = { create: 0, restRead: 5, graphqlRead: 2 }[operation];
  const head = expected.length - concurrentTail;
  const sameHead = observed.slice(0, head).join('\n') === expected.slice(0, head).join('\n');
  const sameTail = [...observed.slice(head)].sort().join('\n') === [...expected.slice(head)].sort().join('\n');
  const ok = observed.length === expected.length && sameHead && sameTail;
  return ok ? { operation: label, ok } : { operation: label, ok, observed };
}
