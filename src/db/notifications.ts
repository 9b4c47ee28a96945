// Change signals between processes sharing a database: LISTEN/NOTIFY on PostgreSQL; in-process on PGlite,
// where only one process can open the database anyway.
import { EventEmitter } from 'node:events';
import pg from 'pg';

export interface Notifications {
  /** Calls `onSignal` whenever any process (this one included) signals `channel`. */
  listen(channel: string, onSignal: () => void): Promise<void>;
  signal(channel: string): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_]{1,63}$/;

export function inProcessNotifications(): Notifications {
  const emitter = new EventEmitter();
  return {
    listen: async (channel, onSignal) => void emitter.on(channel, onSignal),
    signal: async (channel) => void emitter.emit(channel),
    close: async () => void emitter.removeAllListeners(),
  };
}

/**
 * One dedicated connection listens (a pooled one would lose its LISTEN when returned); signals go through the
 * pool. A dropped listener connection is reopened: until then the bus's poll covers the gap.
 */
export function postgresNotifications(url: string, pool: pg.Pool, onError: (e: Error) => void): Notifications {
  const handlers = new Map<string, (() => void)[]>();
  let client: pg.Client | null = null;
  let closed = false;
  let reconnect: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => handlers.get(n.channel)?.forEach((h) => h()));
    c.on('error', (e) => {
      onError(e);
      client = null;
      if (!closed) reconnect ??= setTimeout(() => {
        reconnect = null;
        connect().catch(onError);
      }, 1000).unref();
    });
    await c.connect();
    for (const channel of handlers.keys()) await c.query(`LISTEN ${channel}`);
    client = c;
  };

  return {
    async listen(channel, onSignal) {
      if (!CHANNEL.test(channel)) throw new Error(`bad channel name ${channel}`);
      const first = !handlers.has(channel);
      handlers.set(channel, [...(handlers.get(channel) ?? []), onSignal]);
      if (!client) await connect();
      else if (first) await client.query(`LISTEN ${channel}`);
    },
    async signal(channel) {
      if (!CHANNEL.test(channel)) throw new Error(`bad channel name ${channel}`);
      await pool.query(`NOTIFY ${channel}`);
    },
    async close() {
      closed = true;
      if (reconnect) clearTimeout(reconnect);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
