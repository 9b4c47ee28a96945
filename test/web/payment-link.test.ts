// A payment link in real headless Chromium (docs/payment-links.md): opening the link's URL follows the 303 to a new
// invoice's checkout page, which shows the link's items and the store's name and logo (an https logo of the
// merchant's own host, loaded under the page's CSP); editing the store settings changes the checkout page; an
// inactive link shows its friendly page.
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, screenshot, useBrowser } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { freePort } from '../support/net.ts';
import { useServer } from '../support/server.ts';

// The link redirects to PAY_URL and names PUBLIC_BASE_URL: both must be this server, so its port is chosen first.
const ports = Object.fromEntries(await Promise.all(DATABASES.map(async (kind) => [kind, await freePort()] as const)));

const LOGO = PNG.sync.write(Object.assign(new PNG({ width: 2, height: 2 }), { data: Buffer.alloc(16, 0x80) }));

describe.runIf(CHROMIUM)('a payment link in Chromium', () => {
  describe.each(DATABASES)('on %s', (kind) => {
    const base = `http://127.0.0.1:${ports[kind]}`;
    const server = useServer(kind, { PORT: String(ports[kind]), PUBLIC_BASE_URL: base, PAY_URL: `${base}/pay` });
    const browser = useBrowser();

    it('opening the link lands on a new invoice’s checkout page with the link’s items and the store’s name and logo; store edits show there', async () => {
      const m = await server.merchant({ name: 'Corner Café' });
      const store = await server.request('PATCH', '/api/company/settings/store', { token: m.publicToken, json: { name: 'Bean There', logoUrl: 'https://logo.shop.example/bean.png' } });
      expect(store.status, store.text).toBe(200);
      const link = await server.request('POST', '/api/payment-links', {
        token: m.publicToken,
        json: { name: 'Beans', invoiceCurrency: 'eur', items: [{ name: 'Coffee beans 1 kg', price: '24.90' }, { name: 'Filter papers', price: '3.10' }] },
      });
      expect(link.status, link.text).toBe(201);
      expect(link.body.url).toBe(`${base}/l/${link.body.id}`);

      const { page, problems } = await browser.open();
      // The merchant's logo host, served here: the page loads it from https under its CSP.
      const logos: string[] = [];
      await page.route('https://logo.shop.example/**', async (route) => {
        logos.push(route.request().url());
        await route.fulfill({ status: 200, contentType: 'image/png', body: LOGO });
      });
      const response = await page.goto(link.body.url);
      expect(response?.status()).toBe(200);
      expect(page.url()).toMatch(new RegExp(`^${base}/pay/[1-9A-HJ-NP-Za-km-z]{16,24}$`));
      const invoiceId = page.url().split('/').at(-1)!;
      await expect.poll(() => page.locator('h1').textContent()).toBe('Bean There');
      const cells = await page.locator('.order td').allTextContents();
      expect(cells).toEqual(expect.arrayContaining(['Coffee beans 1 kg', 'Filter papers']));
      expect(await page.locator('img.logo').getAttribute('src')).toBe('https://logo.shop.example/bean.png');
      await expect.poll(() => page.locator('img.logo').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(2);
      expect(logos).toEqual(['https://logo.shop.example/bean.png']);
      await screenshot(page, `payment-link-checkout-${kind}`);

      const invoice = await server.request('GET', `/api/invoices/v1/regular/${invoiceId}`, { token: m.publicToken });
      expect(invoice.body).toMatchObject({ paymentLinkId: link.body.id, invoiceContent: { items: [{ name: 'Coffee beans 1 kg', price: '24.90' }, { name: 'Filter papers', price: '3.10' }] } });

      // The merchant edits the store: the checkout page shows it on its next load.
      const edited = await server.request('PATCH', '/api/company/settings/store', { token: m.publicToken, json: { name: 'Bean There Roasters', logoUrl: 'https://logo.shop.example/roasters.png' } });
      expect(edited.status, edited.text).toBe(200);
      await page.reload();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Bean There Roasters');
      await expect.poll(() => page.locator('img.logo').getAttribute('src')).toBe('https://logo.shop.example/roasters.png');
      await expect.poll(() => page.locator('img.logo').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(2);
      // Without a logo the page shows none.
      expect((await server.request('PATCH', '/api/company/settings/store', { token: m.publicToken, json: { logoUrl: null } })).status).toBe(200);
      await page.reload();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Bean There Roasters');
      expect(await page.locator('img.logo').count()).toBe(0);
      expect(problems).toEqual([]);

      // Each opening is a new invoice; an inactive link shows its page, in German when asked.
      const second = await page.goto(link.body.url);
      expect(second?.status()).toBe(200);
      expect(page.url().split('/').at(-1)).not.toBe(invoiceId);
      expect((await server.request('POST', `/api/payment-links/${link.body.id}/deactivate`, { token: m.publicToken })).status).toBe(200);
      const gone = await page.goto(`${link.body.url}?lang=de`);
      expect(gone?.status()).toBe(410);
      expect(await page.locator('h1').textContent()).toBe('Dieser Zahlungslink ist nicht mehr aktiv');
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      await screenshot(page, `payment-link-inactive-${kind}`);
      // Chromium reports the 410 of the page itself; nothing else may fail.
      expect(problems.filter((p) => !/status of 410/.test(p))).toEqual([]);
    });
  });
});
