// A chain node that does not answer when the server starts: marked optional, its currencies are refused with a clear
// 503 and /health says why, until it answers; not optional, the start stops and names the node and the way out.
import { beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { freshDatabase } from '../support/databases.ts';
import { FAKE_USDT_CONTRACT, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { eventually } from '../support/funding.ts';
import { useServer } from '../support/server.ts';

const tronConfig = (apiUrl: string, extra: Record<string, unknown> = {}) => ({ apiUrl, xpub: testXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 3, pollMs: 100, ...extra });

describe('an optional chain node that does not answer at start', () => {
  let fake: FakeChains;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    fake = await startFakeChains();
    fake.down = true;
    Object.assign(env, chainsEnv({ tron: tronConfig(fake.tronUrl, { optional: true }) }));
    return () => fake.close();
  });
  const server = useServer('pglite', env);

  it('refuses its currencies with 503 and a reason, says so in /health, and takes them again once the node answers', async () => {
    const m = await server.liveMerchant();
    const invoice = async (paymentCurrency: string) => {
      const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 10 }] } });
      return server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency } });
    };
    const refused = await invoice('trc20usdt');
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Payments on tron are unavailable now: its node does not answer' });
    // Other networks are not concerned: without a node they are not offered live (422), as before the outage.
    const btc = await invoice('btc');
    expect(btc.status).toBe(422);
    expect(btc.body.error.details).toEqual([{ path: 'paymentCurrency', message: 'btc is not offered in live mode: no node runs bitcoin on this service (CHAINS_FILE)' }]);
    const health = (await server.request('GET', '/health')).body;
    expect(health.status).toBe('degraded');
    expect(health.chains.find((c: { network: string }) => c.network === 'tron')).toEqual({
      network: 'tron',
      live: 'node',
      test: 'sandbox',
      node: new URL(fake.url).origin,
      state: 'failing',
      detail: expect.stringMatching(/answered 503/),
    });

    fake.down = false;
    await eventually(
      () => server.request('GET', '/health').then((r) => r.body),
      (b) => b.status === 'ok',
    );
    const taken = await invoice('trc20usdt');
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body.address.address).toMatch(/^T/);
  });
});

describe('a chain node that does not answer at start, not optional', () => {
  it('stops the start with a message naming the node and what to do', async () => {
    const db = await freshDatabase('pglite');
    try {
      const config = loadConfig({
        DATABASE_URL: db.url,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        ...chainsEnv({ tron: tronConfig('http://127.0.0.1:1') }),
      });
      await expect(startApp(config, createLogger('silent'))).rejects.toThrow(
        /^tron: the node http:\/\/127\.0\.0\.1:1 does not answer or disagrees with CHAINS_FILE: POST \/wallet\/getnowblock at http:\/\/127\.0\.0\.1:1 failed: .+ \(mark it "optional": true to start without it\)$/,
      );
    } finally {
      await db.drop();
    }
  });
});
