// REST cursor pages (`?limit=&after=`): one more row than the page is read, to know whether another page follows.

/** Prisma arguments for a page of `limit` rows after the row whose `field` is `after`. */
export const pageArgs = <F extends string>(field: F, limit: number, after: string | undefined) => ({
  take: limit + 1,
  ...(after ? { cursor: { [field]: after } as Record<F, string>, skip: 1 } : {}),
});

/** The page and the cursor of the next one (the last row's cursor when more rows follow, else null). */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (row: T) => string): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, nextCursor: rows.length > limit ? cursorOf(page.at(-1)!) : null };
}
