// Watching the statements an in-process server sends, whichever way they go: on PostgreSQL at pg's Client.query,
// which Prisma's adapter and the direct statements (src/db/direct.ts) both go through; on PGlite at Prisma's
// $queryRaw, the only way raw statements go there.
import pg from 'pg';
import type { TestServer } from './server.ts';

/** Told each statement's text; what it answers is then told the statement's rows (if the statement succeeds). */
export type StatementWatcher = (text: string) => ((rows: unknown[]) => void) | void;

type Fn = (this: unknown, ...args: unknown[]) => unknown;

const textOf = (q: unknown): string =>
  // pg: a text or a config; Prisma: a tagged template's strings, or a Prisma.Sql.
  typeof q === 'string' ? q : Array.isArray(q) ? (q as string[]).join('') : String((q as { text?: unknown; sql?: unknown } | undefined)?.text ?? (q as { sql?: unknown } | undefined)?.sql ?? '');

function watching(original: Fn, watch: StatementWatcher, rowsOf: (result: unknown) => unknown[]): Fn {
  return function (this: unknown, ...args: unknown[]) {
    const seen = watch(textOf(args[0]));
    if (!seen) return original.apply(this, args);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (e: unknown, r: unknown) => void;
      args[last] = (e: unknown, r: unknown) => {
        if (!e) seen(rowsOf(r));
        callback(e, r);
      };
      return original.apply(this, args);
    }
    return Promise.resolve(original.apply(this, args)).then((r) => (seen(rowsOf(r)), r));
  };
}

/** Runs `fn` with `watch` told of every raw statement `server` sends meanwhile. */
export async function watchStatements<T>(server: TestServer, watch: StatementWatcher, fn: () => Promise<T>): Promise<T> {
  const [target, method, rowsOf] =
    server.app.db.kind === 'postgres'
      ? [pg.Client.prototype as unknown as Record<string, Fn>, 'query', (r: unknown) => (r as { rows: unknown[] }).rows]
      : [server.app.db.prisma as unknown as Record<string, Fn>, '$queryRaw', (r: unknown) => r as unknown[]];
  const original = target[method]!;
  target[method] = watching(original, watch, rowsOf);
  try {
    return await fn();
  } finally {
    target[method] = original;
  }
}
