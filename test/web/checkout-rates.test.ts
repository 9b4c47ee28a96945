// The checkout page when a currency has no good exchange rate (docs/rates.md): test mode on live rates
// (TEST_MODE_RATES=live) from recorded answers served locally; Bitstamp 30% off leaves ETH with two disagreeing
// sources, so ETH is refused with 503 RATE_UNAVAILABLE while BTC still has three. The page says ETH is temporarily
// unavailable on its field, marks the option, and the client pays in BTC instead; in German too.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, useBrowser } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { tempDir } from '../support/processes.ts';
import { startRateSources, type RateSourcesServer } from '../support/rate-sources.ts';
import { useServer } from '../support/server.ts';

describe.runIf(CHROMIUM)('the checkout page without a rate for one currency', () => {
  describe.each(DATABASES)('on %s', (kind) => {
    let sources: RateSourcesServer;
    const env: Record<string, string> = { TEST_MODE_RATES: 'live' };
    beforeAll(async () => {
      sources = await startRateSources();
      sources.set('bitstamp', { factor: 1.3 });
      const file = path.join(tempDir('payrail-rates-'), 'rates.json');
      fs.writeFileSync(file, JSON.stringify({ sources: sources.sources(), refreshSeconds: 1, maxAgeSeconds: 5, timeoutSeconds: 1, minSources: 2 }));
      env['RATES_CONFIG'] = file;
    });
    afterAll(() => sources.close());
    const server = useServer(kind, env);
    const browser = useBrowser();

    for (const [lang, label, button, unavailable, option] of [
      ['en', 'Pay in', 'Continue to payment', 'Ether (ETH, Ethereum) is temporarily unavailable: no reliable exchange rate right now. Please choose another currency.', 'Ether (ETH, Ethereum) (temporarily unavailable)'],
      ['de', 'Bezahlen mit', 'Weiter zur Zahlung', 'Ether (ETH, Ethereum) ist vorübergehend nicht verfügbar: Gerade gibt es keinen verlässlichen Wechselkurs. Bitte wählen Sie eine andere Währung.', 'Ether (ETH, Ethereum) (vorübergehend nicht verfügbar)'],
    ] as const) {
      it(`says the currency is temporarily unavailable and lets the client pay in another (${lang})`, async () => {
        await eventually(
          () => server.request('GET', '/api/rates?invoiceCurrency=usd'),
          (r) => r.body.rates.some((x: { paymentCurrency: string }) => x.paymentCurrency === 'btc'),
          10_000,
        );
        const m = await server.merchant({ name: 'Corner Café' });
        const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: '4.50' }] } });
        const { page, problems } = await browser.open();
        await page.goto(`${server.url}/pay/${created.body.id}?lang=${lang}`);
        await page.getByLabel(lang === 'en' ? 'Your e-mail' : 'Ihre E-Mail-Adresse').fill('client@example.com');
        const select = page.getByLabel(label);
        const ethValue = 'ETH';
        await select.selectOption(ethValue);
        await page.getByRole('button', { name: button }).click();

        await expect.poll(() => select.getAttribute('aria-invalid')).toBe('true');
        const describedBy = (await select.getAttribute('aria-describedby'))!.split(' ');
        expect(await page.locator(`#${describedBy[1]}`).textContent()).toBe(unavailable);
        const eth = select.locator(`option[value="${ethValue}"]`);
        expect(await eth.textContent()).toBe(option);
        expect(await eth.isDisabled()).toBe(true);
        expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('paymentCurrency');
        // The invoice is still open: the others are offered, and BTC goes through.
        expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status).toBe('created');
        await select.selectOption('BTC');
        await page.getByRole('button', { name: button }).click();
        await page.locator('[data-address]').waitFor();
        const filled = (await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body;
        expect(filled.paymentDetails.rateSources.paymentCurrency.sources.map((s: { source: string }) => s.source).sort()).toEqual(['coingecko', 'kraken']);
        expect(problems).toEqual([]);
      });
    }
  });
});
