// Requests to a provider with quotas (TronGrid, toncenter, a public Solana RPC) go through one limiter per provider
// (CHAINS_FILE `rateLimit` of the node; every client of the node in the process shares it): at most `perSecond` on
// average with `burst` at once, within the day's budget (`perDay`, quota.ts), served in the order asked. A throttling
// answer (429, or 403/503 from a node with a rateLimit) pauses every request to the provider for its Retry-After, or
// an exponential backoff without one, and the request is tried again: a throttled provider slows the scans down
// instead of failing them. Nodes without a `rateLimit` (your own) are not limited.
import { DailyBudget, type Clock } from './quota.ts';

export type { Clock } from './quota.ts';

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

export interface RateLimitConfig {
  /** Requests per second on average. */
  perSecond: number;
  /** Requests at once (also the largest JSON-RPC batch); default: perSecond rounded up. */
  burst?: number | undefined;
  /** The provider's daily quota. */
  perDay?: number | undefined;
  /** The longest backoff after a throttling answer without Retry-After; default 60 s. */
  maxBackoffMs?: number | undefined;
}

/** What a limiter tells whoever counts (the metrics). */
export interface LimiterEvents {
  requested(n: number): void;
  /** A throttling answer (`429`, `403`, `503`), or `paced`: a request waited for the limit here. */
  throttled(reason: '429' | '403' | '503' | 'paced'): void;
}

/** A Retry-After longer than this is taken as this (a hostile or broken header must not stop a network for days). */
const MAX_RETRY_AFTER_MS = 600_000;
const DEFAULT_MAX_BACKOFF_MS = 60_000;

export class RateLimiter {
  readonly burst: number;
  readonly budget: DailyBudget | null;
  private tokens: number;
  private at: number;
  private pausedUntil = 0;
  private streak = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<LimiterEvents>();

  constructor(
    readonly config: RateLimitConfig,
    readonly clock: Clock = realClock,
  ) {
    this.burst = Math.max(1, Math.floor(config.burst ?? Math.ceil(config.perSecond)));
    this.tokens = this.burst;
    this.at = clock.now();
    this.budget = config.perDay ? new DailyBudget(config.perDay, clock) : null;
  }

  observe(listener: LimiterEvents): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits until `n` requests (at most `burst`) may go, after every earlier caller. */
  take(n = 1): Promise<void> {
    const turn = this.queue.then(() => this.acquire(Math.min(Math.max(1, n), this.burst)));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** A throttling answer: nothing goes to the provider before its Retry-After (or a backoff) passed. Answers the delay. */
  throttled(status: 403 | 429 | 503, retryAfterMs: number | null): number {
    this.streak++;
    const backoff = Math.min(this.config.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(this.streak - 1, 20));
    const delay = retryAfterMs === null ? backoff : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + delay);
    for (const l of this.listeners) l.throttled(String(status) as '429' | '403' | '503');
    return delay;
  }

  /** An answer that was not throttling: the next backoff starts short again. */
  answered(): void {
    this.streak = 0;
  }

  private async acquire(n: number): Promise<void> {
    let paced = false;
    for (;;) {
      this.refill();
      const wait = Math.max(this.pausedUntil - this.clock.now(), this.tokens >= n ? 0 : Math.ceil(((n - this.tokens) * 1_000) / this.config.perSecond), this.budget?.waitMs(n) ?? 0);
      if (wait <= 0) break;
      paced = true;
      await this.clock.sleep(wait);
    }
    this.tokens -= n;
    this.budget?.spend(n);
    for (const l of this.listeners) {
      l.requested(n);
      if (paced) l.throttled('paced');
    }
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.config.perSecond) / 1_000);
    this.at = now;
  }
}

/** The Retry-After header in ms (delta-seconds or an HTTP date), or null without a usable one. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  if (/^\d{1,9}$/.test(header.trim())) return Number(header.trim()) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const shared = new Map<string, RateLimiter>();

/**
 * The one limiter of a provider in this process: every client of the same node with the same limit shares it (the
 * watcher's scans, sends, the custody check).
 */
export function sharedLimiter(node: string, config: RateLimitConfig): RateLimiter {
  const key = `${node}\n${JSON.stringify(config)}`;
  let limiter = shared.get(key);
  if (!limiter) shared.set(key, (limiter = new RateLimiter(config)));
  return limiter;
}

/** The limiter of `node` on a clock of a benchmark's (one that runs a provider's hours in seconds), set before its adapter is made. */
export function useLimiterClock(node: string, config: RateLimitConfig, clock: Clock): RateLimiter {
  const key = `${node}\n${JSON.stringify(config)}`;
  const limiter = new RateLimiter(config, clock);
  shared.set(key, limiter);
  return limiter;
}
