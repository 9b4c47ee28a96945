// The event bus's fan-out between instances over Redis pub/sub (REDIS_URL), through Yoga's Redis event target:
// the relay publishes each batch it read from the Event table once, every instance receives it. Pub/sub is at most
// once; the bus's gap rule (src/core/bus.ts) turns a lost batch into a read of the table, never into a lost event.
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import type { BusBatch, BusCursor, BusFanout, BusMessage } from './bus.ts';

const CONNECT_TIMEOUT_MS = 10_000;

interface WireCursor {
  txid: string;
  seq: string;
}

interface WireMessage extends WireCursor {
  eventId: string;
  type: string;
  companyId: string;
  subjectType: string;
  subjectId: string | null;
  payload: unknown;
  createdAt: string;
}

interface WireBatch {
  prev: WireCursor;
  upto: WireCursor;
  messages: WireMessage[];
}

const toWire = (c: BusCursor): WireCursor => ({ txid: c.txid.toString(), seq: c.seq.toString() });
const fromWire = (c: WireCursor): BusCursor => ({ txid: BigInt(c.txid), seq: BigInt(c.seq) });

export const encodeBatch = (batch: BusBatch): WireBatch => ({
  prev: toWire(batch.prev),
  upto: toWire(batch.upto),
  messages: batch.messages.map((m) => ({
    ...toWire(m),
    eventId: m.eventId,
    type: m.type,
    companyId: m.companyId,
    subjectType: m.subject.type,
    subjectId: m.subject.id,
    payload: m.payload,
    createdAt: m.createdAt.toISOString(),
  })),
});

export const decodeBatch = (wire: WireBatch): BusBatch => ({
  prev: fromWire(wire.prev),
  upto: fromWire(wire.upto),
  messages: wire.messages.map(
    (m): BusMessage => ({
      ...fromWire(m),
      eventId: m.eventId,
      type: m.type,
      companyId: m.companyId,
      subject: { type: m.subjectType, id: m.subjectId },
      payload: m.payload,
      createdAt: new Date(m.createdAt),
    }),
  ),
});

/** Waits for a client's first connection; a wrong URL or a Redis that is down stops the start with a clear error. */
async function connected(client: Redis, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis (REDIS_URL) did not answer within ${CONNECT_TIMEOUT_MS} ms (${what})`)), CONNECT_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A fan-out on `channel` (one per database: several deployments may share one Redis). Connects both clients
 * before it answers.
 */
export async function redisFanout(url: string, channel: string, logger: Logger): Promise<BusFanout> {
  // The publisher fails fast while Redis is away (receivers then read the table); the subscriber reconnects and
  // subscribes again by itself.
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: 'payrail-bus', retryStrategy: (n: number) => Math.min(n * 200, 2_000) };
  const publisher = new Redis(url, { ...options, enableOfflineQueue: false });
  const subscriber = new Redis(url, options);
  let lastError = '';
  for (const client of [publisher, subscriber]) {
    client.on('error', (e: Error) => {
      // One line per distinct failure, not one per reconnect attempt.
      if (e.message !== lastError) logger.warn({ err: e }, 'Redis connection failed; the event bus reads the table meanwhile');
      lastError = e.message;
    });
    client.on('ready', () => (lastError = ''));
  }
  try {
    await connected(publisher, 'publisher');
    await connected(subscriber, 'subscriber');
  } catch (e) {
    publisher.disconnect();
    subscriber.disconnect();
    throw e;
  }
  // The event target publishes without awaiting: this client reports a failed publish instead of rejecting.
  const reportingPublisher = {
    publish: (ch: string, message: string) =>
      publisher.publish(ch, message).catch((e: unknown) => logger.warn({ err: e }, 'could not publish an event batch; receivers read the table')),
  };
  const target = createRedisEventTarget<CustomEvent<WireBatch>>({ publishClient: reportingPublisher as never, subscribeClient: subscriber });
  return {
    publish: (batch) => void target.dispatchEvent(new CustomEvent(channel, { detail: encodeBatch(batch) })),
    async subscribe(onBatch) {
      target.addEventListener(channel, (event) => {
        try {
          onBatch(decodeBatch((event as CustomEvent<WireBatch>).detail));
        } catch (e) {
          logger.error({ err: e }, 'an event batch from Redis could not be read');
        }
      });
      // The event target subscribes without awaiting; wait until Redis confirmed, so nothing published after
      // this resolves is missed.
      await subscriber.subscribe(channel);
    },
    async close() {
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
    },
  };
}
