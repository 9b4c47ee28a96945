// Named (server-side prepared) statements for the hot path. PostgreSQL parses and plans an unnamed statement on
// every execution; for the payment booking that planning cost more than running it. A marked statement gets a
// name per text, so each connection parses it once and reuses its plan (docs/operations.md, "Named statements").
import { createHash } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';

const MARK = '/* prepared */ ';

/**
 * Distinct statement texts one process names; later ones run unnamed. Every connection keeps each named statement
 * and its plan until it closes, so this bounds the server memory they hold whatever the texts.
 */
export const MAX_PREPARED_STATEMENTS = 64;

/**
 * `sql` as a named statement. Only for statements run often whose text comes from a small set of shapes (values
 * are parameters, lists are arrays). Its result must name its columns (`columnsOf`), never `*`: a cached plan
 * whose `*` grew a column (a rolling release's migration) fails until the connection closes.
 */
export const prepared = (sql: Prisma.Sql): Prisma.Sql => Prisma.sql`${Prisma.raw(MARK)}${sql}`;

const columnLists = new Map<Record<string, string>, Map<string, Prisma.Sql>>();

/** The columns of a model (its Prisma scalar field enum), quoted, optionally qualified by `alias`: `*` without the risk. */
export function columnsOf(fields: Record<string, string>, alias = ''): Prisma.Sql {
  const lists = columnLists.get(fields) ?? columnLists.set(fields, new Map()).get(fields)!;
  let list = lists.get(alias);
  if (!list) {
    const prefix = alias ? `${alias}.` : '';
    list = Prisma.raw(Object.values(fields).map((column) => `${prefix}"${column}"`).join(', '));
    lists.set(alias, list);
  }
  return list;
}

/**
 * The pg adapter's statementNameGenerator: a name for each marked text (the first `limit` of them), none otherwise.
 * `prefix` keeps the names of one user of a connection apart from another's (db/direct.ts).
 */
export function statementNamer(limit = MAX_PREPARED_STATEMENTS, prefix = 'payrail_'): (query: { sql: string }) => string | undefined {
  const names = new Map<string, string>();
  return ({ sql }) => {
    if (!sql.startsWith(MARK)) return undefined;
    let name = names.get(sql);
    if (name === undefined && names.size < limit) {
      name = `${prefix}${createHash('sha1').update(sql).digest('hex')}`;
      names.set(sql, name);
    }
    return name;
  };
}
