// The providers' limiter on a clock the test owns (its sleeps move the time on): the pace and burst, the day's
// budget spent evenly, a throttling answer pausing every request (Retry-After or a growing backoff), the order kept.
import { describe, expect, it } from 'vitest';
import { chainsFileSchema, solanaChainSchema } from '../../src/chains/config.ts';
import { RateLimiter, retryAfterMs, type Clock } from '../../src/chains/rate-limit.ts';

function virtualClock(start = Date.UTC(2026, 0, 1, 12)): Clock & { t: number } {
  const clock = {
    t: start,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}

describe('the providers rate limiter', () => {
  it('lets `burst` requests go at once, then one per 1/perSecond, in the order asked', async () => {
    const clock = virtualClock();
    const limiter = new RateLimiter({ perSecond: 2, burst: 2 }, clock);
    const start = clock.t;
    const done: [number, number][] = [];
    await Promise.all([1, 2, 3, 4, 5, 6].map((i) => limiter.take().then(() => done.push([i, clock.t - start]))));
    expect(done).toEqual([
      [1, 0],
      [2, 0],
      [3, 500],
      [4, 1000],
      [5, 1500],
      [6, 2000],
    ]);
    // A batch counts each call; one larger than the burst takes the burst (callers cut batches to it).
    const before = clock.t;
    await limiter.take(2);
    expect(clock.t - before).toBe(1000);
    await limiter.take(50);
    expect(clock.t - before).toBe(2000);
  });

  it("spends the day's budget evenly: an hour's worth at once, then the day's pace; counts what is left today", async () => {
    const clock = virtualClock();
    const limiter = new RateLimiter({ perSecond: 1_000, burst: 1_000, perDay: 2_400 }, clock);
    const start = clock.t;
    for (let i = 0; i < 100; i++) await limiter.take();
    expect(clock.t - start).toBeLessThan(1_000);
    await limiter.take();
    // 2,400 a day is one per 36 s once the hour's 100 are spent.
    expect(clock.t - start).toBeGreaterThanOrEqual(36_000);
    expect(clock.t - start).toBeLessThan(37_000);
    expect(limiter.budget!.remainingToday()).toBe(2_299);
    clock.t = Date.UTC(2026, 0, 2, 0, 0, 1);
    expect(limiter.budget!.remainingToday()).toBe(2_400);
  });

  it('pauses every request after a throttling answer: for its Retry-After, else a backoff that grows until an answer gets through', async () => {
    const clock = virtualClock();
    const limiter = new RateLimiter({ perSecond: 100, burst: 100, maxBackoffMs: 5_000 }, clock);
    const events: string[] = [];
    limiter.observe({ requested: () => undefined, throttled: (reason) => events.push(reason) });
    const waited = async () => {
      const before = clock.t;
      await limiter.take();
      return clock.t - before;
    };
    expect(limiter.throttled(429, 3_000)).toBe(3_000);
    expect(await waited()).toBe(3_000);
    limiter.answered();
    expect([limiter.throttled(503, null), limiter.throttled(503, null), limiter.throttled(403, null), limiter.throttled(503, null)]).toEqual([1_000, 2_000, 4_000, 5_000]);
    limiter.answered();
    expect(limiter.throttled(503, null)).toBe(1_000);
    // A Retry-After of days is cut to 10 minutes.
    expect(limiter.throttled(429, 7 * 86_400_000)).toBe(600_000);
    expect(events.filter((e) => e !== 'paced')).toEqual(['429', '503', '503', '403', '503', '503', '429']);
    expect(events).toContain('paced');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    expect(retryAfterMs('5', now)).toBe(5_000);
    expect(retryAfterMs(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });

  it('is configured per node in CHAINS_FILE (tron, ton, solana), its values checked', () => {
    const node = (rateLimit: unknown) => ({ rpcUrl: 'https://solana.example', address: '11111111111111111111111111111111', rateLimit });
    expect(chainsFileSchema.parse({ solana: node({ perSecond: 2, burst: 20 }) }).solana).toMatchObject({ rateLimit: { perSecond: 2, burst: 20 } });
    const problems = (rateLimit: unknown) => solanaChainSchema.safeParse(node(rateLimit)).error?.issues.map((i) => i.path.join('.'));
    expect(problems({ perSecond: 0 })).toEqual(['rateLimit.perSecond']);
    expect(problems({ perSecond: 1, burst: 0.5 })).toEqual(['rateLimit.burst']);
    expect(problems({ perSecond: 1, perDay: -1 })).toEqual(['rateLimit.perDay']);
    expect(problems({ perSecond: 1, perHour: 5 })).toEqual(['rateLimit']);
    expect(problems({ burst: 5 })).toEqual(['rateLimit.perSecond']);
  });
});
