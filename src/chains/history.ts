// Histories that an API serves newest first and pages backwards (a TON account's transactions, the signatures of a
// Solana address): each scan reads down to where the last one stopped, at most a few pages. A larger backlog (after
// an outage) is read over several scans, downwards from its newest item; what arrives meanwhile waits for the next
// round, so a scan stays short whatever the backlog (a watcher's lease outlives a few polls, not an hour of reading).

export interface HistoryCursor<P> {
  /** Every item at or below it was handled; null: everything is new. */
  floor: P | null;
  /** A backlog being read: its newest item, and the oldest one read so far (reading goes on below it). */
  backlog: { top: P; below: P } | null;
}

export interface HistoryPage<T> {
  /** Newest first. */
  items: T[];
  /** Whether older items may exist beyond these. */
  more: boolean;
}

export interface NewestFirstHistory<P, T> {
  /** Items older than `below` (the newest when null); the API may stop at `floor`. */
  page(below: P | null, floor: P | null): Promise<HistoryPage<T>>;
  position(item: T): P;
  /** Whether `item` is at or below `floor`, i.e. handled before. */
  reached(item: T, floor: P): boolean;
}

/** Reads what is new since `cursor`, `handle`s it page by page, and answers where the next scan goes on. */
export async function readHistory<P, T>(
  history: NewestFirstHistory<P, T>,
  cursor: HistoryCursor<P>,
  maxPages: number,
  handle: (items: T[]) => Promise<void>,
): Promise<HistoryCursor<P>> {
  const floor = cursor.floor;
  let top: P | null = cursor.backlog?.top ?? null;
  let below: P | null = cursor.backlog?.below ?? null;
  for (let pages = 0; pages < maxPages; pages++) {
    const { items, more } = await history.page(below, floor);
    const end = floor === null ? -1 : items.findIndex((item) => history.reached(item, floor));
    const fresh = end === -1 ? items : items.slice(0, end);
    if (fresh.length > 0) {
      top ??= history.position(fresh[0]!);
      await handle(fresh);
    }
    if (end !== -1 || !more || fresh.length === 0) return { floor: top ?? floor, backlog: null };
    below = history.position(fresh.at(-1)!);
  }
  return { floor, backlog: { top: top!, below: below! } };
}
