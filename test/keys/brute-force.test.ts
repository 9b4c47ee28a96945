// Brute force through the real server: failed authentications from one address are slowed, then refused with 429
// and Retry-After (REST, GraphQL, graphql-ws), while a valid token from the same address still passes; another
// address is not affected; the block ends after AUTH_BLOCK_SECONDS. Addresses come from X-Forwarded-For behind one
// trusted proxy hop.
import { describe, expect, it } from 'vitest';
import { AuthThrottle } from '../../src/core/auth-throttle.ts';
import { DATABASES } from '../support/databases.ts';
import { liveSocket } from '../support/live.ts';
import { useServer } from '../support/server.ts';

const from = (address: string) => ({ 'x-forwarded-for': address });

describe('AuthThrottle', () => {
  it('slows failures past the first threshold, refuses past the second until the block ends, and forgets old failures', () => {
    let now = 0;
    const t = new AuthThrottle({ slowdownAfter: 2, blockAfter: 4, blockMs: 60_000, windowMs: 600_000 }, () => now);
    expect(t.failed('a')).toEqual({ delayMs: 0, refusal: null });
    expect(t.failed('a')).toEqual({ delayMs: 0, refusal: null });
    expect(t.failed('a').delayMs).toBe(100);
    expect(t.failed('a').delayMs).toBe(200);
    const refused = t.failed('a').refusal;
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 60 });
    expect(t.failed('b')).toEqual({ delayMs: 0, refusal: null });
    now += 30_000;
    expect(t.failed('a').refusal?.retryAfterSeconds).toBe(30);
    // Past the block and the window: a fresh start.
    now += 700_000;
    expect(t.failed('a')).toEqual({ delayMs: 0, refusal: null });
  });

  it('keeps memory bounded: the least recently failing address goes first', () => {
    const t = new AuthThrottle({ slowdownAfter: 1, blockAfter: 100, blockMs: 1_000, maxAddresses: 2 });
    t.failed('a');
    t.failed('a');
    t.failed('b');
    t.failed('c');
    // 'a' was forgotten: its count starts again.
    expect(t.failed('a').delayMs).toBe(0);
  });
});

describe.each(DATABASES)('failed authentication from one address on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind, { TRUST_PROXY_HOPS: '1', AUTH_FAILURES_SLOWDOWN: '3', AUTH_FAILURES_BLOCK: '6', AUTH_BLOCK_SECONDS: '3' });

  it('is slowed, then refused with 429 and Retry-After; a valid token from the same address still passes; other addresses are not affected', async () => {
    const m = await server.merchant();
    const attacker = from('203.0.113.7');
    const bad = (headers = attacker) => server.request('GET', '/api/company/balances', { token: 'pk_test_guess', headers });
    const timings: number[] = [];
    for (let i = 0; i < 6; i++) {
      const started = Date.now();
      const res = await bad();
      timings.push(Date.now() - started);
      expect(res.status).toBe(401);
    }
    // The 4th to 6th failures were answered late.
    expect(Math.min(...timings.slice(3))).toBeGreaterThanOrEqual(90);
    const refused = await bad();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const gql = await server.request('POST', '/graphql', { token: 'pk_test_guess', headers: attacker, json: { query: '{ viewer { mode } }' } });
    expect(gql.status).toBe(429);
    expect(gql.headers.get('retry-after')).toBeTruthy();
    const socket = liveSocket(server.url, { token: 'pk_test_guess', headers: attacker });
    expect(await socket.accepted).toBe(4403);
    // The merchant's valid token from that very address passes: no lock-out.
    const own = await server.request('GET', '/api/company/balances', { token: m.publicToken, headers: attacker });
    expect(own.status).toBe(200);
    // Another address is counted apart.
    expect((await bad(from('198.51.100.1'))).status).toBe(401);
    // The block ends.
    await new Promise((r) => setTimeout(r, 3_200));
    expect((await bad()).status).toBe(401);
  });
});
