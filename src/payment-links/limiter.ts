// The limit on invoices made by opening payment links, per client address (docs/payment-links.md, "Rate limit"): a
// bot cannot fill the database with invoices. rate-limiter-flexible counts a fixed window per address: in memory
// (each instance counts what it sees), or in Redis with REDIS_URL (one count for every instance, with the memory
// count standing in while Redis is unreachable). IPv6 clients are counted per /64, the block one client holds.
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors/app-error.ts';
import type { Logger } from '../logger.ts';

export interface OpenLimitOptions {
  points: number;
  windowSeconds: number;
  redisUrl?: string | undefined;
  /** Names this deployment's keys in a shared Redis (db/identity.ts); asked once, at the first opening. */
  namespace: () => Promise<string>;
  logger: Logger;
}

export interface OpenLimiter {
  /** Counts one invoice for `address`; throws RateLimitedError (with its Retry-After) past the limit. */
  admit(address: string): Promise<void>;
  close(): Promise<void>;
}

/** The key an address counts under: itself, or its /64 for IPv6. */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

export function openLimiter(options: OpenLimitOptions): OpenLimiter {
  const memory = new RateLimiterMemory({ keyPrefix: 'payment-link-open', points: options.points, duration: options.windowSeconds });
  let redis: Redis | null = null;
  let shared: Promise<RateLimiterRedis> | null = null;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', (e: unknown) => options.logger.warn({ err: e }, 'payment link limit: Redis unreachable, counting in memory meanwhile'));
  }
  /** The memory count, or with Redis the shared one, made at the first opening (its key prefix needs the database's identity). */
  const limiter = (): Promise<RateLimiterAbstract | RateLimiterStoreAbstract> => {
    const client = redis;
    if (!client) return Promise.resolve(memory);
    shared ??= options.namespace().then(
      (ns) => new RateLimiterRedis({ storeClient: client, keyPrefix: `payrail:payment-link-open:${ns}`, points: options.points, duration: options.windowSeconds, insuranceLimiter: memory }),
      (e: unknown) => {
        shared = null;
        throw e;
      },
    );
    return shared;
  };
  return {
    async admit(address) {
      try {
        await (await limiter()).consume(addressKey(address));
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        const seconds = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
        throw new RateLimitedError(`Too many invoices from payment links from this address: retry in ${seconds} s`, seconds);
      }
    },
    async close() {
      redis?.disconnect();
    },
  };
}
