// CSV by RFC 4180 (csv-stringify): a header row, CRLF line ends, fields quoted when they hold a comma, a quote, CR or
// LF. Written a page of rows at a time, so an export never sits in memory whole.
import { stringify } from 'csv-stringify/sync';

const OPTIONS = { record_delimiter: 'windows', quoted_match: /[\r\n]/ } as const;

/**
 * Pages of rows in keyset order, read lazily: the next page is read only when the consumer asks for more, and starts
 * after the last row of the previous one. A page shorter than `limit` is the last.
 */
export async function* keysetPages<T>(read: (after: T | null, limit: number) => Promise<T[]>, limit: number): AsyncGenerator<T[]> {
  let after: T | null = null;
  for (;;) {
    const page = await read(after, limit);
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    after = page[page.length - 1]!;
  }
}

/** The CSV text of the rows, one chunk per page; the first chunk carries the header (an empty export is the header). */
export async function* csvChunks(columns: readonly string[], pages: AsyncIterable<string[][]>): AsyncGenerator<string> {
  let first = true;
  for await (const rows of pages) {
    yield stringify(first ? [[...columns], ...rows] : rows, OPTIONS);
    first = false;
  }
  if (first) yield stringify([[...columns]], OPTIONS);
}
