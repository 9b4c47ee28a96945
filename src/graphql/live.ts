// Committed events of the event bus as the async iterables GraphQL subscriptions return. The bus publishes an event
// only after its transaction committed, in commit order, so a subscriber never sees a change that was rolled back.
// Every message carries its place on the bus as `extensions.cursor`; a subscriber that reconnects passes the last
// one as `after` and gets what it missed from the Event table, then live messages, without a gap or a repeat.
import { scopesKey, type Access } from '../core/scopes.ts';
import { createSourceEventStream, execute, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Prisma } from '../../generated/prisma/client.ts';
import { countEvents, isAfter, presentPosition, readEvents, type BusCursor, type BusMessage, type EventBus } from '../core/bus.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
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
  bus: Pick<EventBus, 'subscribe' | 'position'>;
  db: Db;
  logger?: Pick<Logger, 'error'>;
}

/** Most history one `after` may replay; an older cursor catches up through a query or the events feed instead. */
export const MAX_REPLAY = 10_000;

interface Route {
  keep: (m: BusMessage) => boolean;
  listener: (m: BusMessage) => void;
}

/**
 * Routes each bus message to the subscriptions it concerns, found by its subject or its company: a message costs
 * the subscriptions that follow it, not every subscription of the process. One per bus.
 */
class LiveRouter {
  private readonly bySubject = new Map<string, Set<Route>>();
  private readonly byCompany = new Map<string, Set<Route>>();

  constructor(private readonly bus: LiveSource['bus']) {
    bus.subscribe((m) => this.route(m));
  }

  /** Adds a route and answers the bus position it starts after: it gets every message after it, none before. */
  add(filter: EventFilter, listener: (m: BusMessage) => void): { position: BusCursor; remove: () => void } {
    const route: Route = { keep: matches(filter), listener };
    const [index, key] = filter.subjectId !== undefined ? [this.bySubject, filter.subjectId] : [this.byCompany, filter.companyId ?? ''];
    let routes = index.get(key);
    if (!routes) index.set(key, (routes = new Set()));
    routes.add(route);
    return {
      position: this.bus.position(),
      remove: () => {
        routes.delete(route);
        if (routes.size === 0 && index.get(key) === routes) index.delete(key);
      },
    };
  }

  /** Subscriptions following the bus now (diagnostics, metrics). */
  get size(): number {
    let n = 0;
    for (const index of [this.bySubject, this.byCompany]) for (const routes of index.values()) n += routes.size;
    return n;
  }

  private route(m: BusMessage): void {
    for (const routes of [m.subject.id === null ? undefined : this.bySubject.get(m.subject.id), this.byCompany.get(m.companyId), this.byCompany.get('')]) {
      if (!routes) continue;
      for (const route of routes) if (route.keep(m)) route.listener(m);
    }
  }
}

const routers = new WeakMap<object, LiveRouter>();
const routerOf = (bus: LiveSource['bus']) => {
  let router = routers.get(bus);
  if (!router) routers.set(bus, (router = new LiveRouter(bus)));
  return router;
};

/** How many subscriptions of this process follow `bus` now. */
export const liveSubscriptionCount = (bus: LiveSource['bus']): number => routers.get(bus)?.size ?? 0;

/** A subscriber left while its history was being read: the reading stops. */
class SubscriberGone extends Error {}

const fellBehind = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    `This subscription left more than ${MAX_UNREAD} messages unread and was ended; subscribe again with \`after\` set to the last cursor received`,
  );

/**
 * One subscriber's items waiting to be read, as the async iterator GraphQL consumes: a plain buffer and at most one
 * waiting reader (a message costs no promise of its own unless the reader waits). `return()` (the client left)
 * runs `onEnd` at once, even while a read waits.
 */
class LiveQueue<T> implements AsyncIterableIterator<T> {
  private buffer: T[] = [];
  private reader: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private failure: { error: unknown } | null = null;
  private ended = false;
  private drainedWaiters: (() => void)[] = [];
  onEnd: () => void = () => {};

  [Symbol.asyncIterator]() {
    return this;
  }

  get unread(): number {
    return this.buffer.length;
  }

  /** Nobody reads any more (the subscriber left, or the subscription failed). */
  get closed(): boolean {
    return this.ended || this.failure !== null;
  }

  push(item: T): void {
    if (this.ended || this.failure) return;
    if (this.reader) {
      const reader = this.reader;
      this.reader = null;
      reader.resolve({ value: item, done: false });
    } else {
      this.buffer.push(item);
    }
  }

  /** Ends the subscription with `error` once what is buffered has been read. */
  fail(error: unknown): void {
    if (this.ended || this.failure) return;
    this.failure = { error };
    this.onEnd();
    if (this.reader && this.buffer.length === 0) {
      const reader = this.reader;
      this.reader = null;
      this.finish();
      reader.reject(error);
    }
  }

  /** Resolves once everything pushed so far has been read (or the subscription ended). */
  drained(): Promise<void> {
    if (this.buffer.length === 0 || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer.length > 0) {
      const value = this.buffer.shift()!;
      if (this.buffer.length === 0) this.wakeDrained();
      return Promise.resolve({ value, done: false });
    }
    if (this.failure && !this.ended) {
      this.finish();
      return Promise.reject(this.failure.error);
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.reader = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.failure) this.onEnd();
    this.finish();
    this.buffer = [];
    const reader = this.reader;
    this.reader = null;
    reader?.resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  private finish(): void {
    this.ended = true;
    this.wakeDrained();
  }

  private wakeDrained(): void {
    const waiters = this.drainedWaiters;
    this.drainedWaiters = [];
    for (const wake of waiters) wake();
  }
}

/** The first read (the current state, the history after `after`) failed on our side, a dropped database connection say. */
function startFailed(source: LiveSource, e: unknown): AppError {
  source.logger?.error({ err: e }, 'a live subscription could not read its start; it ends');
  return new AppError('SERVICE_UNAVAILABLE', 'This subscription could not read where it starts; subscribe again (with `after` set to the last cursor received, if any)');
}

/**
 * A subscriber's items, fed by the bus from the moment it starts. `begin(send, position)` runs first (the current
 * state, or the history up to `position`, waiting for the reader between pages); live messages that arrive
 * meanwhile wait and follow it, those after `position` only. A reader that leaves more than MAX_UNREAD items
 * unread is ended with an error (bounded memory per subscriber; it resumes with `after`).
 */
function fromBus<T>(
  source: LiveSource,
  filter: EventFilter,
  begin: (send: (item: LiveItem<T>) => Promise<void>, position: BusCursor) => Promise<(m: BusMessage) => boolean>,
): AsyncIterable<LiveItem<T>> {
  const queue = new LiveQueue<LiveItem<T>>();
  const push = (item: LiveItem<T>) => {
    if (queue.unread >= MAX_UNREAD) queue.fail(fellBehind());
    else queue.push(item);
  };
  let early: BusMessage[] | null = [];
  let wanted: (m: BusMessage) => boolean = () => true;
  const { position, remove } = routerOf(source.bus).add(filter, (m) => {
    // The bus may still be catching up to what `begin` read: those messages are skipped, now and later.
    if (!early) return void (wanted(m) && push(itemOf(m)));
    if (early.length >= MAX_UNREAD) queue.fail(fellBehind());
    else early.push(m);
  });
  queue.onEnd = remove;
  // Pages of history wait for the reader, so a long history is never held in memory at once; once the reader is
  // gone, the reading stops.
  const send = async (item: LiveItem<T>) => {
    if (queue.closed) throw new SubscriberGone();
    push(item);
    if (queue.unread >= HISTORY_PAGE) await queue.drained();
    if (queue.closed) throw new SubscriberGone();
  };
  begin(send, position).then(
    (keepAfter) => {
      wanted = keepAfter;
      const held = early ?? [];
      early = null;
      for (const m of held) if (wanted(m)) push(itemOf(m));
    },
    (e: unknown) => queue.fail(e instanceof AppError || e instanceof SubscriberGone ? e : startFailed(source, e)),
  );
  return queue;
}

/** The matching messages from now on; with `after`, first those since that cursor (from the table). */
export function liveEvents(source: LiveSource, filter: EventFilter, after: BusCursor | null): AsyncIterable<LiveItem<never>> {
  return fromBus(source, filter, async (send, position) => {
    if (!after) return () => true;
    await checkReplay(source.db, filter, after, position);
    for (let from = after; isAfter(position, from); ) {
      const { messages, full } = await readEvents(source.db, { after: from, upto: position, limit: HISTORY_PAGE, where: filterSql(filter) });
      for (const m of messages) await send(itemOf(m));
      if (!full) break;
      from = messages.at(-1)!;
    }
    // A cursor from a faster instance skips what lies before it, live messages too.
    return (m) => isAfter(m, after);
  });
}

/**
 * A cursor to resume from must be one this service could have sent (none lies beyond what has committed) and not
 * so old that its history is unbounded work: at most MAX_REPLAY changes behind.
 */
async function checkReplay(db: Db, filter: EventFilter, after: BusCursor, position: BusCursor): Promise<void> {
  const refuse = (message: string) => new ValidationError([{ path: 'after', message }]);
  if (isAfter(after, await presentPosition(db))) throw refuse('is not a cursor of this service: no change has committed past it');
  if ((await countEvents(db, { after, upto: position, where: filterSql(filter), limit: MAX_REPLAY + 1 })) > MAX_REPLAY) {
    throw refuse(`is more than ${MAX_REPLAY} changes behind: catch up with a query (or GET /api/company/events), then subscribe without after`);
  }
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
  return fromBus<T>(source, filter, async (send) => {
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

/**
 * The resolver of a subscription's items: the current state as it is, a message through `at` (once per message
 * for every subscriber of this process: they share the read).
 */
export function liveResolver<T, C extends object>(at: (ctx: C, m: BusMessage) => Promise<T>) {
  const resolved = new WeakMap<BusMessage, Promise<T>>();
  return (item: LiveItem<T>, _args: unknown, ctx: C): T | Promise<T> => {
    if ('current' in item) return item.current;
    let value = resolved.get(item.message);
    if (!value) {
      const read = at(ctx, item.message);
      // A failed read is not kept: the next try at this message reads again.
      read.catch(() => resolved.get(item.message) === read && resolved.delete(item.message));
      resolved.set(item.message, (value = read));
    }
    return value;
  };
}

/** One item per bus message for every subscriber of this process: what shared executions are keyed by. */
const items = new WeakMap<BusMessage, { message: BusMessage }>();
const itemOf = (message: BusMessage) => {
  let item = items.get(message);
  if (!item) items.set(message, (item = { message }));
  return item;
};

const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 0;

/**
 * What decides a subscription's result for one item: the parsed document (Yoga's parser cache hands every
 * subscriber of one query text the same object), the operation, the variables and the caller.
 */
function executionKey(args: ExecutionArgs): string {
  let documentId = documentIds.get(args.document);
  if (documentId === undefined) documentIds.set(args.document, (documentId = nextDocumentId++));
  const context = args.contextValue as { company?: { id: string } | null; access?: Access | null };
  // The caller's scopes decide which fields resolve: two keys of one merchant share only with equal scopes.
  const caller = `${context.company?.id ?? ''}:${context.access ? scopesKey(context.access.scopes) : ''}`;
  return `${documentId}|${args.operationName ?? ''}|${caller}|${JSON.stringify(args.variableValues ?? {})}`;
}

const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

/** The result of one item for one execution key, computed once however many subscribers share both. */
function sharedResult(item: object, key: string, run: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  let byKey = executions.get(item);
  if (!byKey) executions.set(item, (byKey = new Map()));
  let result = byKey.get(key);
  if (!result) byKey.set(key, (result = run()));
  return result;
}

/** The item's place on the bus, for `extensions.cursor`. */
function cursorOfItem(item: unknown): BusCursor | null {
  if (item && typeof item === 'object') {
    if ('message' in item) return item.message as BusMessage;
    if ('cursor' in item) return item.cursor as BusCursor | null;
  }
  return null;
}

/** Maps an async iterator without buffering; return() reaches the source at once, even while a next() waits. */
function mapAsync<T, R>(source: AsyncIterable<T>, map: (value: T) => Promise<R>): AsyncIterableIterator<R> {
  const iterator = source[Symbol.asyncIterator]();
  const step = async (r: IteratorResult<T>): Promise<IteratorResult<R>> => (r.done ? { done: true, value: undefined } : { done: false, value: await map(r.value) });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => iterator.next().then(step),
    return: async () => {
      await iterator.return?.();
      return { done: true, value: undefined };
    },
    throw: async (error: unknown) => {
      if (iterator.throw) return step(await iterator.throw(error));
      throw error;
    },
  };
}

/**
 * Subscriptions of this process share their executions: each item (a bus message, see itemOf) is executed once per
 * execution key and the result goes to every subscriber with that key; with thousands of dashboards on one
 * merchant, a change costs one execution, not one per subscriber. Each result carries the item's cursor as
 * `extensions.cursor`.
 */
async function subscribeShared(args: ExecutionArgs) {
  const source = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in source)) return source;
  const key = executionKey(args);
  const ended = (args.contextValue as { liveEnded?: AbortSignal }).liveEnded;
  const logger = (args.contextValue as { logger?: Logger }).logger;
  return endingSubscription(
    mapAsync(source as AsyncIterable<unknown>, (item) =>
      sharedResult(item as object, key, async () => {
        const result = await executeItem(args, item);
        if (!failedOnOurSide(result)) return result;
        logger?.error({ err: result.errors?.[0]?.originalError ?? result.errors?.[0] }, 'a live change could not be read; the subscription ends');
        return unreadChange();
      }),
    ),
    ended,
  );
}

/** Waits before each new try at a change that could not be read (a dropped database connection, a failover). */
export const LIVE_ITEM_RETRY_DELAYS_MS = [100, 500, 2_000];

/** One item's result with its cursor, tried again while it fails on our side. */
async function executeItem(args: ExecutionArgs, item: unknown): Promise<ExecutionResult> {
  for (let attempt = 0; ; attempt++) {
    // A context of its own: per-request caches (dataloader) must not outlive one change of a long subscription.
    const result = await execute({ ...args, rootValue: item, contextValue: { ...(args.contextValue as object) } });
    if (!failedOnOurSide(result) || attempt >= LIVE_ITEM_RETRY_DELAYS_MS.length) {
      const cursor = cursorOfItem(item);
      return cursor && result.data ? { ...result, extensions: { ...result.extensions, cursor: encodeLiveCursor(cursor) } } : result;
    }
    await new Promise((resolve) => setTimeout(resolve, LIVE_ITEM_RETRY_DELAYS_MS[attempt]));
  }
}

/**
 * No message at all for a change, for a reason that is not the client's (an AppError is a deliberate answer): sending
 * the next change after it would leave a hole that resuming from the last cursor cannot fill.
 */
const failedOnOurSide = (r: ExecutionResult): boolean =>
  !r.data && r.errors !== undefined && r.errors.some((e) => !(e.originalError instanceof AppError));

const unreadResults = new WeakSet<ExecutionResult>();

/** The last result of a subscription that could not read a change: it names what to do, then the subscription completes. */
function unreadChange(): ExecutionResult {
  const result: ExecutionResult = {
    errors: [
      new GraphQLError('A change could not be read and this subscription ended; subscribe again with `after` set to the last cursor received', {
        extensions: { code: 'SERVICE_UNAVAILABLE' },
      }),
    ],
  };
  unreadResults.add(result);
  return result;
}

/** The last result of a subscription whose credential stopped holding (a rotated token). */
const credentialRevoked = (): ExecutionResult => ({
  errors: [new GraphQLError('The token of this subscription was rotated or revoked; subscribe again with a valid one', { extensions: { code: 'UNAUTHENTICATED' } })],
});

/**
 * Completes a subscription right after its unreadChange() result (no later change may follow the hole), or when
 * `signal` fires (an SSE stream whose credential stopped holding, src/graphql/live-limits.ts): then a last result
 * says why. Either way the source lets go of the bus at once, and the stream ends cleanly.
 */
function endingSubscription(iterator: AsyncIterableIterator<ExecutionResult>, signal?: AbortSignal): AsyncIterableIterator<ExecutionResult> {
  let finished = false;
  const aborted =
    signal &&
    new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      else signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
  const done: IteratorResult<ExecutionResult> = { done: true, value: undefined };
  /** Lets go of the source; answers `last` as the final result. */
  const finish = (last: IteratorResult<ExecutionResult>): IteratorResult<ExecutionResult> => {
    finished = true;
    void iterator.return?.();
    return last;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: async () => {
      if (finished) return done;
      if (signal?.aborted) return finish({ done: false, value: credentialRevoked() });
      const next = await (aborted ? Promise.race([iterator.next(), aborted]) : iterator.next());
      if (next === 'aborted') return finished ? done : finish({ done: false, value: credentialRevoked() });
      return !next.done && unreadResults.has(next.value) ? finish(next) : next;
    },
    return: async () => {
      finished = true;
      await iterator.return?.();
      return done;
    },
    throw: (error: unknown) => iterator.throw?.(error) ?? Promise.reject(error),
  };
}

export const liveExecutionPlugin: Plugin = {
  onSubscribe: ({ setSubscribeFn }) => setSubscribeFn(subscribeShared as never),
};
