// Re-observes the statements the service issues (PostgreSQL only: it wraps pg's Client.query, which both
// Prisma's adapter and pg.Pool.query go through) and compares them with sql.ts, so the baseline cannot
// silently drift from what the service really does.
import pg from 'pg';
import { EXPECTED_STATEMENTS } from './sql.ts';

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;

/** A statement and the connection that sent it (a background job's transaction is on its own connection). */
export interface Captured {
  client: number;
  text: string;
}

/** Every statement any pg client sends while `fn` runs (run nothing else meanwhile). */
export async function captureStatements(fn: () => Promise<void>): Promise<Captured[]> {
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  const clients = new Map<pg.Client, number>();
  const seen: Captured[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    if (!clients.has(this)) clients.set(this, clients.size);
    seen.push({ client: clients.get(this)!, text: typeof q === 'string' ? q : (q.text ?? '') });
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

// Jobs that run beside requests, woken by their commits, not inside them: the token lookup (only when the
// authenticator's 10 s cache is cold; not replayed), the webhook worker's claim, the event bus (its read of new events,
// its NOTIFY to other processes), the e-mail planner's cursor and the autoswap driver's claim.
const BACKGROUND = [
  '"publicTokenHash" = $1', 'SET "claimedUntil"', '"WebhookLane"', 'NOTIFY payrail_events', 'pg_current_snapshot()', '"EmailCursor"', '"EmailPlanned"',
  'UPDATE "AutoSwap" s SET "leaseUntil"',
];
const isBackground = (text: string) => BACKGROUND.some((b) => text.includes(b));

/**
 * The request's statements among everything captured: background statements are left out, and so is a transaction
 * (BEGIN ... COMMIT on one connection) of background statements only; a transaction with any other statement is kept
 * whole, so a request that starts taking one shows up as drift.
 */
export function requestStatements(all: Captured[]): string[] {
  const kept: Captured[] = [];
  const open = new Map<number, Captured[]>();
  for (const statement of all) {
    const tx = open.get(statement.client);
    if (statement.text === 'BEGIN') open.set(statement.client, [statement]);
    else if (tx) {
      tx.push(statement);
      if (statement.text === 'COMMIT' || statement.text === 'ROLLBACK') {
        open.delete(statement.client);
        if (!tx.slice(1, -1).every((s) => isBackground(s.text))) kept.push(...tx);
      }
    } else if (!isBackground(statement.text)) kept.push(statement);
  }
  // A transaction still open when the capture ended: kept unless it is background so far.
  for (const tx of open.values()) if (!tx.slice(1).every((s) => isBackground(s.text))) kept.push(...tx);
  // Back in the order they were sent.
  return kept.sort((a, b) => all.indexOf(a) - all.indexOf(b)).map((s) => s.text);
}

/** Same statements in the same order, except that the concurrent tail may come in any order. */
export function compareStatements(label: string, operation: keyof typeof EXPECTED_STATEMENTS, all: Captured[]): StatementCheck {
  const observed = requestStatements(all);
  const expected = EXPECTED_STATEMENTS[operation];
  const concurrentTail = { create: 0, restRead: 6, graphqlRead: 2 }[operation];
  const head = expected.length - concurrentTail;
  const sameHead = observed.slice(0, head).join('\n') === expected.slice(0, head).join('\n');
  const sameTail = [...observed.slice(head)].sort().join('\n') === [...expected.slice(head)].sort().join('\n');
  const ok = observed.length === expected.length && sameHead && sameTail;
  return ok ? { operation: label, ok } : { operation: label, ok, observed };
}
