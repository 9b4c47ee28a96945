// Committed events of the event bus as the async iterables GraphQL subscriptions return. The bus publishes an event
// only after its transaction committed, in commit order, so a subscriber never sees a change that was rolled back.
// Every message carries its place on the bus as `extensions.cursor`; a subscriber that reconnects passes the last
// one as `after` and gets what it missed from the Event table, then live messages, without a gap or a repeat.
import { Repeater, type Plugin } from 'graphql-yoga';
import { Prisma } from '../../generated/prisma/client.ts';
import { isAfter, readEvents, type BusCursor, type BusMessage, type EventBus } from '../core/bus.ts';
import type { Db } from '../db/client.ts';
import { AppError, ValidationError } from '../errors/app-error.ts';

/** Messages a subscriber may leave unread before it is ended (it resumes with `after`): bounded memory per subscriber. */
export const MAX_UNREAD = 1_000;
/** Rows per read of the history after a cursor. */
const HISTORY_PAGE = 200;
const MAX_BIGINT = 2n ** 63n - 1n;
const CURSOR = /^(\d{1,19})\.(\d{1,19})$/;

export const AFTER_DESCRIPTION =
  'Resume after this cursor (the `extensions.cursor` of the last message received): first every matching change since, then live ones.';

export const encodeLiveCursor = (c: BusCursor): string => `${c.txid}.${c.seq}`;

/** A cursor from `extensions.cursor`, or null when none was given; anything else is refused. */
export function parseLiveCursor(text: string | null | undefined): BusCursor | null {
  if (text === null || text === undefined) return null;
  const m = CURSOR.exec(text);
  const cursor = m ? { txid: BigInt(m[1]!), seq: BigInt(m[2]!) } : null;
  if (!cursor || cursor.txid > MAX_BIGINT || cursor.seq > MAX_BIGINT) {
    throw new ValidationError([{ path: 'after', message: 'must be an extensions.cursor of a previous message' }]);
  }
  return cursor;
}

/** Which events a subscription follows: one kind of subject, optionally one company, one subject, not some types. */
export interface EventFilter {
  subjectType: string;
  companyId?: string;
  subjectId?: string;
  exceptTypes?: readonly string[];
}

export const matches = (f: EventFilter) => (m: BusMessage): boolean =>
  m.subject.type === f.subjectType &&
  m.subject.id !== null &&
  (f.companyId === undefined || m.companyId === f.companyId) &&
  (f.subjectId === undefined || m.subject.id === f.subjectId) &&
  !f.exceptTypes?.includes(m.type);

/** The same filter over the Event table (alias `x`), for the history after a cursor. */
const filterSql = (f: EventFilter): Prisma.Sql =>
  Prisma.join(
    [
      Prisma.sql`x."subjectType" = ${f.subjectType} AND x."subjectId" IS NOT NULL`,
      ...(f.companyId !== undefined ? [Prisma.sql`x."companyId" = ${f.companyId}::uuid`] : []),
      ...(f.subjectId !== undefined ? [Prisma.sql`x."subjectId" = ${f.subjectId}`] : []),
      ...(f.exceptTypes?.length ? [Prisma.sql`x."type" <> ALL(${[...f.exceptTypes]}::text[])`] : []),
    ],
    ' AND ',
  );

export type LiveItem<T> = { current: T; cursor: BusCursor | null } | { message: BusMessage };

export interface LiveSource {
  bus: Pick<EventBus, 'subscribeFrom'>;
  db: Db;
}

const fellBehind = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    `This subscription left more than ${MAX_UNREAD} messages unread and was ended; subscribe again with \`after\` set to the last cursor received`,
  );

/**
 * A repeater fed by the bus from the moment it starts. `begin(send, position)` runs first (the current state, or
 * the history up to `position`); live messages that arrive meanwhile wait and follow it, those after `position`
 * only. `send` refuses to buffer more than MAX_UNREAD for a slow reader: the subscription then ends with an error.
 */
function fromBus<T>(
  source: LiveSource,
  keep: (m: BusMessage) => boolean,
  begin: (send: (item: LiveItem<T>) => Promise<void>, position: BusCursor) => Promise<(m: BusMessage) => boolean>,
): AsyncIterable<LiveItem<T>> {
  return new Repeater<LiveItem<T>>(async (push, stop) => {
    let unread = 0;
    let failed = false;
    const send = (item: LiveItem<T>): Promise<void> => {
      if (failed) return Promise.resolve();
      if (++unread > MAX_UNREAD) {
        failed = true;
        stop(fellBehind());
        return Promise.resolve();
      }
      return push(item).then(
        () => void unread--,
        () => void unread--,
      );
    };
    let early: BusMessage[] | null = [];
    let wanted: (m: BusMessage) => boolean = () => true;
    const { position, unsubscribe } = source.bus.subscribeFrom((m) => {
      if (!keep(m)) return;
      // The bus may still be catching up to what `begin` read: those messages are skipped, now and later.
      if (!early) return void (wanted(m) && send({ message: m }).catch(() => undefined));
      if (early.length >= MAX_UNREAD && !failed) {
        failed = true;
        stop(fellBehind());
      }
      early.push(m);
    });
    try {
      wanted = await begin(send, position);
      const held = early;
      early = null;
      for (const m of held) if (wanted(m)) await send({ message: m });
    } catch (e) {
      unsubscribe();
      stop(e);
      return;
    }
    await stop;
    unsubscribe();
  });
}

/** The matching messages from now on; with `after`, first those since that cursor (from the table). */
export function liveEvents(source: LiveSource, filter: EventFilter, after: BusCursor | null): AsyncIterable<LiveItem<never>> {
  const keep = matches(filter);
  return fromBus(source, keep, async (send, position) => {
    if (!after) return () => true;
    for (let from = after; isAfter(position, from); ) {
      const { messages, full } = await readEvents(source.db, { after: from, upto: position, limit: HISTORY_PAGE, where: filterSql(filter) });
      for (const m of messages) await send({ message: m });
      if (!full) break;
      from = messages.at(-1)!;
    }
    // A cursor from the future (or a forged one) skips what lies before it, live messages too.
    return (m) => isAfter(m, after);
  });
}

/**
 * One object as it stands now, then every matching message after it; with `after`, the messages since that
 * cursor instead of the current state. `load` answers the object and the seq of the last event its snapshot
 * reflects (and that event's cursor): messages the snapshot already shows are skipped, so nothing is lost or
 * repeated between the read and the subscription, and the order holds.
 */
export function currentThenEvents<T>(
  source: LiveSource,
  filter: EventFilter,
  after: BusCursor | null,
  load: () => Promise<{ current: T; last: BusCursor | null }>,
): AsyncIterable<LiveItem<T>> {
  if (after) return liveEvents(source, filter, after);
  return fromBus<T>(source, matches(filter), async (send) => {
    const { current, last } = await load();
    await send({ current, cursor: last });
    return (m) => last === null || m.seq > last.seq;
  });
}

/**
 * A subject's row (`rowSql` selects it) and its last event, read in one statement (one snapshot), for
 * `currentThenEvents`; null when there is no such row. A subject's events are ordered by seq: its row lock
 * serialises their writers.
 */
export async function withLastEvent<T>(db: Db, subject: { type: string; id: string }, rowSql: Prisma.Sql): Promise<{ current: T; last: BusCursor | null } | null> {
  const [row] = await db.$queryRaw<(T & { lastTxid: bigint | null; lastSeq: bigint | null })[]>`
    SELECT r.*, l."txid" AS "lastTxid", l."seq" AS "lastSeq" FROM (${rowSql}) r
    LEFT JOIN LATERAL (
      SELECT e."txid", e."seq" FROM "Event" e WHERE e."subjectType" = ${subject.type} AND e."subjectId" = ${subject.id} ORDER BY e."seq" DESC LIMIT 1
    ) l ON TRUE`;
  if (!row) return null;
  const { lastTxid, lastSeq, ...current } = row;
  return { current: current as T, last: lastTxid !== null && lastSeq !== null ? { txid: lastTxid, seq: lastSeq } : null };
}

const cursors = new WeakMap<object, string>();

/**
 * The resolver of a subscription's items: the current state as it is, a message through `at` (once per message
 * for every subscriber of this process: they share the read), and the item's cursor noted for `extensions`.
 */
export function liveResolver<T, C extends object>(at: (ctx: C, m: BusMessage) => Promise<T>) {
  const resolved = new WeakMap<BusMessage, Promise<T>>();
  return (item: LiveItem<T>, _args: unknown, ctx: C): T | Promise<T> => {
    if ('current' in item) {
      if (item.cursor) cursors.set(ctx, encodeLiveCursor(item.cursor));
      else cursors.delete(ctx);
      return item.current;
    }
    cursors.set(ctx, encodeLiveCursor(item.message));
    let value = resolved.get(item.message);
    if (!value) resolved.set(item.message, (value = at(ctx, item.message)));
    return value;
  };
}

/**
 * Puts each subscription message's cursor into its `extensions.cursor`. A subscription's items are resolved and
 * sent one at a time, so the cursor noted while resolving belongs to the result that follows.
 */
export const liveCursorPlugin: Plugin = {
  onSubscribe: () => ({
    onSubscribeResult: () => ({
      onNext: ({ args, result, setResult }) => {
        const cursor = cursors.get(args.contextValue as object);
        if (cursor && result.data) setResult({ ...result, extensions: { ...result.extensions, cursor } });
      },
    }),
  }),
};
