// Live mode's rates with a real node (anvil, so ETH is offered live): without RATES_CONFIG live proceed answers 503
// RATE_UNAVAILABLE ("no rate source configured") while test mode keeps its static table, GET /api/rates without a
// token is empty, and readiness says why; with RATES_CONFIG live mode prices from its sources and readiness follows
// them (degraded when some currency has no rate, failing when none has one).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { tempDir } from '../support/processes.ts';
import { EXCHANGES, startRateSources, type RateSourcesServer } from '../support/rate-sources.ts';
import { useServer, type TestServer } from '../support/server.ts';

const fill = async (server: TestServer, token: string, paymentCurrency: string) => {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: '35' }] } });
  expect(created.status, created.text).toBe(201);
  return server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });
};
const ratesCheck = async (server: TestServer) => (await server.app.ops.readiness.evaluate()).checks.find((c) => c.name === 'rates')!;

describe.each(DATABASES)('live-mode rates on %s', (kind) => {
  let node: Anvil | undefined;
  let sources: RateSourcesServer;
  const bare: Record<string, string> = {};
  const configured: Record<string, string> = {};
  beforeAll(async () => {
    node = await startAnvil();
    sources = await startRateSources();
    const chains = chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: 1, pollMs: 200 } });
    const { RATES_CONFIG: _static, ...withoutRates } = chains;
    Object.assign(bare, withoutRates);
    const file = path.join(tempDir('payrail-rates-'), 'rates.json');
    fs.writeFileSync(file, JSON.stringify({ sources: sources.sources(), refreshSeconds: 1, maxAgeSeconds: 3, timeoutSeconds: 1, minSources: 2 }));
    Object.assign(configured, withoutRates, { RATES_CONFIG: file });
  });
  afterAll(async () => {
    await node?.stop();
    await sources.close();
  });

  describe('without RATES_CONFIG', () => {
    const server = useServer(kind, bare);
    it('live proceed answers 503 RATE_UNAVAILABLE, test mode keeps the static table, readiness says why', async () => {
      const m = await server.merchant();
      const live = await fill(server, m.live.publicToken, 'eth');
      expect(live.status, live.text).toBe(503);
      expect(live.body.error).toMatchObject({ code: 'RATE_UNAVAILABLE', message: 'No exchange rate for eth now: no rate source configured (RATES_CONFIG)' });
      const test = await fill(server, m.test.publicToken, 'eth');
      expect(test.status, test.text).toBe(200);
      expect(test.body.paymentDetails.rateSources.kind).toBe('static');
      expect((await server.request('GET', '/api/rates?invoiceCurrency=usd')).body).toEqual({ rates: [] });
      const withTestToken = await server.request('GET', '/api/rates?invoiceCurrency=usd', { token: m.test.publicToken });
      expect(withTestToken.body.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'eth')).toMatchObject({ rate: '0.000285714285714286', sources: ['static'] });
      expect(await ratesCheck(server)).toEqual({ name: 'rates', state: 'failing', detail: 'no rate source configured (RATES_CONFIG): live proceed in eth, usdt, usdc answers 503 RATE_UNAVAILABLE' });
    });
  });

  describe('with RATES_CONFIG', () => {
    const server = useServer(kind, configured);
    it('live proceed prices from the sources; test mode stays static; readiness degraded, failing when no currency has a rate, degraded again', async () => {
      const m = await server.merchant();
      await eventually(() => ratesCheck(server), (c) => c.state !== 'failing', 10_000);
      const live = await fill(server, m.live.publicToken, 'eth');
      expect(live.status, live.text).toBe(200);
      expect(live.body.paymentDetails.rateSources).toMatchObject({ kind: 'live', paymentCurrency: { asset: 'eth', usdPrice: '3500' } });
      expect((await fill(server, m.test.publicToken, 'eth')).body.paymentDetails.rateSources.kind).toBe('static');
      // ETH is priced; USDT and USDC (ERC-20 on the same node) have one source each here: degraded, still ready.
      const degraded = await ratesCheck(server);
      expect(degraded.state).toBe('degraded');
      expect(degraded.detail).toMatch(/^no good rate for usdt \(too few agreeing sources \(1 of 1 agree, 2 needed\)\), usdc \(too few agreeing sources/);
      const ready = await fetch(`${server.url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { rates: 'degraded' } });

      for (const s of [...EXCHANGES, 'coingecko'] as const) sources.set(s, 'down');
      const failing = await eventually(() => ratesCheck(server), (c) => c.state === 'failing', 10_000);
      expect(failing.detail).toMatch(/^no good rate for eth \((no fresh source|too few agreeing sources.*)\), usdt/);
      expect((await fetch(`${server.url}/health/ready`)).status).toBe(503);
      expect((await fill(server, m.live.publicToken, 'eth')).status).toBe(503);

      for (const s of [...EXCHANGES, 'coingecko'] as const) sources.set(s, 'ok');
      await eventually(() => ratesCheck(server), (c) => c.state === 'degraded', 10_000);
      expect((await fill(server, m.live.publicToken, 'eth')).status).toBe(200);
    });
  });
});
