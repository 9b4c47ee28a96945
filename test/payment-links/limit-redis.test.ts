// The payment link limit with REDIS_URL (docs/payment-links.md, "Rate limit"): two instances on one PostgreSQL count
// one client address together, so a client cannot get twice the budget by spreading its openings; the count is the
// database's (another database sharing the Redis counts apart).
import { afterAll, describe, expect, it, inject } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

const redisUrl = inject('redisUrl');
const LIMIT = { PAYMENT_LINK_OPENS_PER_ADDRESS: '3', PAYMENT_LINK_OPEN_WINDOW_SECONDS: '600' };

describe.runIf(redisUrl && DATABASES.includes('postgres'))('the payment link limit on two instances (PostgreSQL + Redis)', { timeout: 120_000 }, () => {
  const server = useServer('postgres', { REDIS_URL: redisUrl!, ...LIMIT });
  const other = useServer('postgres', { REDIS_URL: redisUrl!, ...LIMIT });
  let second: App | undefined;
  afterAll(async () => second?.stop());

  it('openings through either instance count against one budget per address', async () => {
    const config = loadConfig({ DATABASE_URL: server.databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '3', REDIS_URL: redisUrl!, ...LIMIT });
    second = await startApp(config, createLogger('silent'));
    const m = await server.merchant();
    const link = (await server.request('POST', '/api/payment-links', { token: m.publicToken, json: { name: 'L', invoiceCurrency: 'usd', items: [{ name: 'Tea', price: '2' }] } })).body;
    const open = (base: string) => fetch(`${base}/l/${link.id}`, { redirect: 'manual' });
    const statuses = [(await open(server.url)).status, (await open(second.url)).status, (await open(server.url)).status];
    expect(statuses).toEqual([303, 303, 303]);
    const refused = await open(second.url);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await open(server.url)).status).toBe(429);
    expect(await server.app.db.prisma.invoice.count({ where: { paymentLinkId: link.id } })).toBe(3);

    // Another database on the same Redis has its own count for the same address.
    const o = await other.merchant();
    const otherLink = (await other.request('POST', '/api/payment-links', { token: o.publicToken, json: { name: 'L', invoiceCurrency: 'usd', items: [{ name: 'Tea', price: '2' }] } })).body;
    expect((await fetch(`${other.url}/l/${otherLink.id}`, { redirect: 'manual' })).status).toBe(303);
  });
});
