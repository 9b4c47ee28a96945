// Live rates through the real server on both databases: RATES_CONFIG names every source at a local server that answers
// from their recorded answers; TEST_MODE_RATES=live makes test-mode proceed (on the sandbox chain) use them. The rate
// is locked at proceed with its audit (REST, GraphQL), a bad source never moves it, and when no good rate exists
// proceed answers 503 RATE_UNAVAILABLE until sources return.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Money } from '../../src/domain/money.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { tempDir } from '../support/processes.ts';
import { EXCHANGES, startRateSources, type RateSourcesServer } from '../support/rate-sources.ts';
import { useServer, type TestServer } from '../support/server.ts';

const ISO_MS_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MAX_AGE_S = 3;

const RATE_DETAILS = `rateDetails { kind spreadPercent invoiceCurrency { asset usdPrice sources { source market } } paymentCurrency { asset usdPrice sources { source market price usdPrice fetchedAt } } }`;

describe.each(DATABASES)('live rates on %s', (kind) => {
  let sources: RateSourcesServer;
  const env: Record<string, string> = { TEST_MODE_RATES: 'live' };
  beforeAll(async () => {
    sources = await startRateSources();
    const file = path.join(tempDir('payrail-rates-'), 'rates.json');
    fs.writeFileSync(file, JSON.stringify({ sources: sources.sources(), refreshSeconds: 1, maxAgeSeconds: MAX_AGE_S, timeoutSeconds: 1, minSources: 2, maxDeviationPercent: '3', spreadPercent: '0' }));
    env['RATES_CONFIG'] = file;
  });
  afterAll(() => sources.close());
  const server = useServer(kind, env);

  const allOk = () => {
    for (const s of [...EXCHANGES, 'coingecko'] as const) sources.set(s, 'ok');
  };
  beforeEach(async () => {
    allOk();
    sources.setPrice('ETH', 3500);
    await ratesSettled(server, 'eth', '0.000285714285714286');
  });

  const invoice = async (token: string, invoiceCurrency: string, price: string) => {
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency, items: [{ name: 'Order', price }] } });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };
  const proceed = (id: string, paymentCurrency: string) =>
    server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency } });

  it('GET /api/rates and GraphQL rates: the aggregated rates, their sources and age; public, the token picks the mode', async () => {
    const res = await server.request('GET', '/api/rates?invoiceCurrency=usd');
    expect(res.status, res.text).toBe(200);
    const eth = res.body.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'eth');
    // Bitstamp's ETH/USD and CoinGecko say 3500. Kraken, Coinbase and Binance quote ETH in USDT, and only CoinGecko
    // prices USDT itself here: one source is too few, so USDT is not assumed to be 1 and those markets are left out.
    expect(eth).toEqual({ paymentCurrency: 'eth', rate: '0.000285714285714286', sources: ['coingecko', 'bitstamp'], updatedAt: expect.stringMatching(ISO_MS_Z) });
    expect(res.body.rates.map((r: { paymentCurrency: string }) => r.paymentCurrency)).not.toContain('usdterc20');
    expect(Date.now() - Date.parse(eth.updatedAt)).toBeLessThan(MAX_AGE_S * 1000 + 1000);
    const btc = res.body.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'btc');
    expect(btc.sources.sort()).toEqual(['bitstamp', 'coingecko', 'kraken']);
    // A currency without enough sources is left out: TON is priced by CoinGecko alone here.
    expect(res.body.rates.map((r: { paymentCurrency: string }) => r.paymentCurrency)).not.toContain('ton');

    const m = await server.merchant();
    const withToken = await server.request('GET', '/api/rates?invoiceCurrency=usd', { token: m.publicToken });
    expect(withToken.body.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'eth').rate).toBe(eth.rate);

    const gql = await server.graphql('query R($c: InvoiceCurrency!) { rates(invoiceCurrency: $c) { paymentCurrency rate sources updatedAt } }', { c: 'USD' });
    expect(gql.body.errors).toBeUndefined();
    const gEth = gql.body.data.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'ETH');
    expect(gEth.rate).toBe(eth.rate);
    expect(gEth.sources.map((s: string) => s.toLowerCase()).sort()).toEqual([...eth.sources].sort());

    const bad = await server.request('GET', '/api/rates?invoiceCurrency=doge');
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toBe('invoiceCurrency');
    expect((await server.request('GET', '/api/rates')).status).toBe(422);
  });

  it('proceed locks the live rate with its audit; a later price change moves the next invoice only', async () => {
    const m = await server.merchant();
    const first = await invoice(m.publicToken, 'usd', '35');
    const filled = await proceed(first, 'eth');
    expect(filled.status, filled.text).toBe(200);
    expect(filled.body.paymentDetails.rate).toBe('0.000285714285714286');
    const audit = filled.body.paymentDetails.rateSources;
    expect(audit).toMatchObject({ kind: 'live', spreadPercent: '0', invoiceCurrency: { asset: 'usd', usdPrice: '1', sources: [] }, paymentCurrency: { asset: 'eth', usdPrice: '3500' } });
    const used = audit.paymentCurrency.sources as { source: string; market: string; price: string; usdPrice: string; fetchedAt: string }[];
    expect(used.map((s) => s.source).sort()).toEqual(['bitstamp', 'coingecko']);
    expect(used.find((s) => s.source === 'bitstamp')).toEqual({ source: 'bitstamp', market: 'ETH/USD', price: '3500', usdPrice: '3500', fetchedAt: expect.stringMatching(ISO_MS_Z) });
    expect(used.find((s) => s.source === 'coingecko')).toMatchObject({ market: 'ethereum.usd', price: '3500' });
    const gql = await server.graphql(`query Q($id: ID!) { invoice(id: $id) { ${RATE_DETAILS} } }`, { id: first });
    expect(gql.body.data.invoice.rateDetails).toMatchObject({ kind: 'LIVE', paymentCurrency: { asset: 'ETH', usdPrice: '3500' } });
    expect(gql.body.data.invoice.rateDetails.paymentCurrency.sources).toHaveLength(used.length);

    // ETH rises 10% at every source: the next invoice gets the new rate, the first keeps its own.
    sources.setPrice('ETH', 3850);
    await ratesSettled(server, 'eth', '0.00025974025974026');
    const second = await invoice(m.publicToken, 'usd', '35');
    const next = await proceed(second, 'eth');
    expect(next.body.paymentDetails.rate).toBe('0.00025974025974026');
    expect(next.body.paymentDetails.rateSources.paymentCurrency.usdPrice).toBe('3850');
    const again = await server.request('GET', `/api/invoices/v1/regular/${first}`);
    expect(again.body.paymentDetails.rate).toBe('0.000285714285714286');
    expect(again.body.paymentDetails.amount).toBe(filled.body.paymentDetails.amount);
    expect(again.body.paymentDetails.rateSources).toEqual(audit);
  });

  it('EUR and crypto-denominated invoices convert through USD', async () => {
    const m = await server.merchant();
    // EUR: CoinGecko's and Bitstamp's (BTC/USD over BTC/EUR) EUR prices, both 1.08 USD.
    const eur = await proceed(await invoice(m.publicToken, 'eur', '10'), 'eth');
    expect(eur.status, eur.text).toBe(200);
    const eurAudit = eur.body.paymentDetails.rateSources;
    expect(eurAudit.invoiceCurrency.asset).toBe('eur');
    expect(eurAudit.invoiceCurrency.sources.map((s: { source: string }) => s.source).sort()).toEqual(['bitstamp', 'coingecko']);
    expect(new Money(eurAudit.invoiceCurrency.usdPrice).toDecimalPlaces(6).toFixed()).toBe('1.08');
    expect(new Money(eur.body.paymentDetails.rate).toDecimalPlaces(10).toFixed()).toBe(new Money('1.08').div(3500).toDecimalPlaces(10).toFixed());
    // BTC priced, paid in ETH: 95000 / 3500.
    const btc = await proceed(await invoice(m.publicToken, 'btc', '0.01'), 'eth');
    expect(btc.status, btc.text).toBe(200);
    expect(btc.body.paymentDetails.rate).toBe('27.142857142857142857');
    expect(btc.body.paymentDetails.rateSources.invoiceCurrency).toMatchObject({ asset: 'btc', usdPrice: '95000' });
  });

  for (const failure of ['down', 'timeout', 'garbage', 'zero', '30% off'] as const) {
    it(`one source ${failure}: the rate holds and the source is left out`, async () => {
      sources.set('bitstamp', failure === '30% off' ? { factor: 1.3 } : failure);
      // Wait until a refresh ran without bitstamp's BTC price.
      await eventually(
        () => server.request('GET', '/api/rates?invoiceCurrency=usd'),
        (r) => r.body.rates.some((x: { paymentCurrency: string; sources: string[] }) => x.paymentCurrency === 'btc' && !x.sources.includes('bitstamp')),
        10_000,
      );
      const m = await server.merchant();
      const filled = await proceed(await invoice(m.publicToken, 'usd', '95'), 'btc');
      expect(filled.status, filled.text).toBe(200);
      expect(filled.body.paymentDetails.rate).toBe('0.000010526315789474');
      expect(filled.body.paymentDetails.rateSources.paymentCurrency.sources.map((s: { source: string }) => s.source).sort()).toEqual(['coingecko', 'kraken']);
      // Counted in the metrics by what went wrong; the rate stays available and young.
      const metrics = await server.app.ops.metrics.text();
      const count = (kind: string) => Number(new RegExp(`^payrail_rate_source_errors_total\\{source="bitstamp",kind="${kind}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
      if (failure === '30% off') expect(count('outlier')).toBeGreaterThan(0);
      else if (failure === 'zero') expect(count('invalid') + count('failed')).toBeGreaterThan(0);
      else expect(count('failed')).toBeGreaterThan(0);
      expect(metrics).toMatch(/^payrail_rate_available\{asset="btc"\} 1$/m);
      expect(Number(/^payrail_rate_age_seconds\{asset="btc"\} ([\d.]+)$/m.exec(metrics)?.[1])).toBeLessThan(MAX_AGE_S);
    });
  }

  it('all sources down: 503 RATE_UNAVAILABLE once the prices are older than maxAgeSeconds, naming the currency and why; back when sources return', async () => {
    const m = await server.merchant();
    const before = await server.request('GET', '/api/rates?invoiceCurrency=usd');
    const fetchedAt = Date.parse(before.body.rates.find((r: { paymentCurrency: string }) => r.paymentCurrency === 'eth').updatedAt);
    for (const s of [...EXCHANGES, 'coingecko'] as const) sources.set(s, 'down');
    // Within maxAge the last good rate is still used.
    const early = await proceed(await invoice(m.publicToken, 'usd', '35'), 'eth');
    expect(early.status, early.text).toBe(200);
    const refused = await eventually(
      async () => proceed(await invoice(m.publicToken, 'usd', '35'), 'eth'),
      (r) => r.status === 503,
      (MAX_AGE_S + 5) * 1000,
    );
    // Never before the prices it had were maxAgeSeconds old.
    expect(Date.now()).toBeGreaterThanOrEqual(fetchedAt + MAX_AGE_S * 1000);
    // The two sources' last prices age out one after the other: too few first, then none.
    expect(refused.body.error.code).toBe('RATE_UNAVAILABLE');
    expect(refused.body.error.message).toMatch(/^No exchange rate for eth now: (no fresh source|too few agreeing sources \(1 of 1 agree, 2 needed\))$/);
    expect(refused.headers.get('retry-after')).toBe('1');
    // Then none: every price fetched before the sources went down is maxAgeSeconds old by then (a refresh still in
    // flight when they went down may have brought one more, so the wait is as long as the first one, not shorter).
    const stale = await eventually(async () => proceed(await invoice(m.publicToken, 'usd', '35'), 'eth'), (r) => r.body.error?.message?.endsWith('no fresh source') === true, (MAX_AGE_S + 5) * 1000);
    expect(stale.body.error).toMatchObject({ code: 'RATE_UNAVAILABLE', message: 'No exchange rate for eth now: no fresh source', details: [{ path: 'paymentCurrency', message: 'no fresh source' }] });
    const none = await server.request('GET', '/api/rates?invoiceCurrency=usd');
    expect(none.body.rates).toEqual([]);
    const metrics = await server.app.ops.metrics.text();
    expect(metrics).toMatch(/^payrail_rate_available\{asset="eth"\} 0$/m);
    expect(metrics).not.toMatch(/^payrail_rate_age_seconds\{asset="eth"\}/m);
    // GraphQL proceed says the same.
    const id = await invoice(m.publicToken, 'usd', '35');
    const gql = await server.graphql(
      'mutation P($input: ProceedInvoiceInput!) { proceedInvoice(input: $input) { __typename ... on Error { code message } } }',
      { input: { invoiceId: id, clientEmail: 'payer@example.com', paymentCurrency: 'ETH' } },
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.proceedInvoice).toEqual({ __typename: 'RateUnavailableError', code: 'RATE_UNAVAILABLE', message: 'No exchange rate for eth now: no fresh source' });

    // One source back is not enough (minSources 2); a second one is.
    sources.set('coingecko', 'ok');
    await new Promise((r) => setTimeout(r, 1500));
    const one = await proceed(id, 'eth');
    expect(one.status).toBe(503);
    expect(one.body.error.message).toMatch(/^No exchange rate for eth now: too few agreeing sources \(1 of 1 agree, 2 needed\)$/);
    sources.set('bitstamp', 'ok');
    const back = await eventually(() => proceed(id, 'eth'), (r) => r.status === 200, 10_000);
    expect(back.body.paymentDetails.rateSources.paymentCurrency.sources.map((s: { source: string }) => s.source).sort()).toEqual(['bitstamp', 'coingecko']);
  });
});

/** Waits until the server's rate from USD to `currency` is `rate` (a refresh ran with the sources' current prices). */
async function ratesSettled(server: TestServer, currency: string, rate: string): Promise<void> {
  await eventually(
    () => server.request('GET', '/api/rates?invoiceCurrency=usd'),
    (r) => r.status === 200 && r.body.rates.some((x: { paymentCurrency: string; rate: string; sources: string[] }) => x.paymentCurrency === currency && x.rate === rate && x.sources.length >= 2),
    15_000,
  );
}
