// The checkout page in real headless Chromium against the running server: the client fills the invoice, sees the
// address, tag and QR code (decoded from its pixels), pays through the sandbox and watches the page turn to done
// without a reload, then is sent back to the shop; the wrong, closed and 404 views; a 360 px phone; German; the
// fallback to polling when no WebSocket gets through; labels, keyboard, copy buttons and no console errors; the test
// banner on test-mode invoices only.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentUri } from '../../src/chains/payment-uri.ts';
import { Money } from '../../src/domain/money.ts';
import { CHROMIUM, readQr, screenshot, unlabelledControls, useBrowser } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';

/** The shop the client returns to after paying. */
async function startShop(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><h1>Back at the shop</h1>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/thanks`, server };
}

const invoiceFor = async (server: TestServer, token: string, extra: Record<string, unknown> = {}) =>
  (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }, { name: 'Cake', price: 3.25 }], ...extra } })).body
    .id as string;

const proceed = (server: TestServer, id: string, paymentCurrency: string) =>
  server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency } });

describe.runIf(CHROMIUM)('the checkout page in Chromium', () => {
  describe.each(DATABASES)('on %s', (kind) => {
    const server = useServer(kind, { SWEEP_INTERVAL_MS: '200' });
    const browser = useBrowser();
    let shop: { url: string; server: Server };
    let token = '';
    let merchant: TestMerchant;
    beforeAll(async () => {
      shop = await startShop();
      merchant = await server.merchant({ name: 'Corner Café' });
      token = merchant.publicToken;
    });
    afterAll(() => new Promise<void>((resolve) => shop?.server.close(() => resolve())));

    it('fill, address + tag + QR, pay, processing and done without a reload, then back to the shop', async () => {
      const id = await invoiceFor(server, token, { redirectURL: shop.url });
      const { page, problems } = await browser.open();
      const response = await page.goto(`${server.url}/pay/${id}`);
      expect(response?.status()).toBe(200);
      await expect.poll(() => page.locator('h1').textContent()).toBe('Corner Café');
      expect(await page.locator('.order .total').textContent()).toBe('7.75 USD');
      expect(await unlabelledControls(page)).toEqual([]);
      await screenshot(page, `checkout-form-${kind}`);

      // Keyboard only: the e-mail, then the currency, then Enter submits.
      await page.getByLabel('Your e-mail').focus();
      await page.keyboard.type('client@example.com');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('paymentCurrency');
      await page.getByLabel('Pay in').selectOption('TON');
      await page.getByLabel('Your e-mail').press('Enter');

      const address = page.locator('[data-address]');
      await address.waitFor();
      // The new status is read out and takes the focus.
      expect(await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))).toContain('data-status-text');
      expect(await page.locator('main > [role="status"]').first().textContent()).toBe('Waiting for your payment.');
      // A test-mode invoice: the page says the payment is simulated.
      expect(await page.getByText('Test mode: this payment is simulated.', { exact: false }).count()).toBe(1);
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
      const rest = (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
      expect(await address.textContent()).toBe(rest.address.address);
      // TON needs the tag: shown, copyable, and marked as required.
      expect(await page.locator('[data-tag]').textContent()).toBe(rest.address.tag);
      expect(await page.locator('.tag-required .warning').textContent()).toContain('Required');
      const amount = (await page.locator('[data-amount]').getAttribute('data-amount'))!;
      expect(amount).toBe(rest.paymentDetails.amount);
      // The QR code holds the standard payment URI, the same as the "open in wallet" link.
      const uri = paymentUri({ currency: 'ton', address: rest.address.address, tag: rest.address.tag, amount });
      expect(await page.locator('[data-uri]').getAttribute('href')).toBe(uri);
      await expect.poll(() => page.locator('[data-qr]').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      expect(await readQr(page, '[data-qr]')).toBe(uri);
      expect(await page.locator('.countdown').textContent()).toMatch(/^Time left: (29|30):\d\d$/);
      await page.getByRole('button', { name: 'Copy address' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rest.address.address);
      await screenshot(page, `checkout-pending-${kind}`);

      // The payment is seen, then confirmed: the page follows live.
      const seen = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount } });
      expect(seen.status).toBe(201);
      await page.locator('[data-status-text]', { hasText: 'Payment seen, waiting for confirmations.' }).waitFor();
      await screenshot(page, `checkout-processing-${kind}`);
      await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token, json: {} });
      await page.locator('[data-status-text]', { hasText: 'Payment complete. Thank you!' }).waitFor();
      expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
      await screenshot(page, `checkout-done-${kind}`);
      await page.waitForURL(shop.url, { timeout: 10_000 });
      expect(await page.locator('h1').textContent()).toBe('Back at the shop');
      expect(problems).toEqual([]);
    });

    it('the test banner: on every view of a test-mode invoice, on none of a live-mode one', async () => {
      const notice = 'Test mode: this payment is simulated. Do not send real funds to this address.';
      const { page, problems } = await browser.open();
      // Test mode: the form, then (after the fill, without a reload) the payment panel, both with the banner.
      const testId = await invoiceFor(server, token);
      await page.goto(`${server.url}/pay/${testId}`);
      await page.getByLabel('Your e-mail').waitFor();
      expect(await page.locator('main').getAttribute('data-mode')).toBe('test');
      expect(await page.getByText(notice).count()).toBe(1);
      await page.getByLabel('Your e-mail').fill('client@example.com');
      await page.getByLabel('Pay in').selectOption('BTC');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.locator('[data-address]').waitFor();
      expect(await page.getByText(notice).count()).toBe(1);
      // And in German.
      await page.goto(`${server.url}/pay/${testId}?lang=de`);
      await page.locator('[data-address]').waitFor();
      expect(await page.getByText('Testmodus: Diese Zahlung ist simuliert.', { exact: false }).count()).toBe(1);

      // Live mode, on the same server (which runs the simulated chain for test mode): real money, no test banner.
      const liveId = await invoiceFor(server, merchant.live.publicToken);
      for (const lang of ['en', 'de']) {
        await page.goto(`${server.url}/pay/${liveId}?lang=${lang}`);
        await expect.poll(() => page.locator('h1').textContent()).toBe('Corner Café');
        await page.locator('.order .total').waitFor();
        expect(await page.locator('main').getAttribute('data-mode')).toBe('live');
        expect(await page.locator('.banner.warning').count()).toBe(0);
        expect(await page.locator('main').textContent()).not.toMatch(/Test mode|Testmodus|simulated|simuliert/);
      }
      await screenshot(page, `checkout-live-${kind}`);
      expect(problems).toEqual([]);
    });

    it('a short BTC payment: the QR code and the wallet link ask for the rest, not the whole amount', async () => {
      const id = await invoiceFor(server, token);
      await proceed(server, id, 'btc');
      const { page, problems } = await browser.open();
      // Every QR image the page ever draws is counted; the live subscription's first message repeats what the first
      // read showed (its fields in another order) and must not draw the panel again.
      await page.addInitScript(() => {
        const w = window as unknown as { qrDrawn: number };
        w.qrDrawn = 0;
        new MutationObserver((records) => {
          for (const r of records) for (const n of r.addedNodes) if (n instanceof Element) w.qrDrawn += n.matches('img[data-qr]') ? 1 : n.querySelectorAll('img[data-qr]').length;
        }).observe(document, { childList: true, subtree: true });
      });
      const firstMessage = new Promise<void>((resolve) =>
        page.on('websocket', (ws) => ws.on('framereceived', (frame) => String(frame.payload).includes('"type":"next"') && resolve())),
      );
      await page.goto(`${server.url}/pay/${id}`);
      await page.locator('[data-address]').waitFor();
      await firstMessage;
      await page.waitForTimeout(200);
      expect(await page.evaluate(() => (window as unknown as { qrDrawn: number }).qrDrawn)).toBe(1);
      const due = (await page.locator('[data-amount]').getAttribute('data-amount'))!;
      const firstQr = await readQr(page, '[data-qr]');
      expect(firstQr).toBe(await page.locator('[data-uri]').getAttribute('href'));
      const half = new Money(due).div(2).toDecimalPlaces(8).toFixed();
      await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: half, confirmations: 2 } });
      await page.locator('[data-status-text]', { hasText: 'The payment is short' }).waitFor();
      const rest = new Money(due).minus(half).toFixed();
      await expect.poll(() => page.locator('[data-qr]').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      const link = await page.locator('[data-uri]').getAttribute('href');
      expect(link).toContain(`amount=${rest}`);
      expect(await readQr(page, '[data-qr]')).toBe(link);
      expect(problems).toEqual([]);
    });

    it('underpaid: the wrong view with what is missing and how to finish, then refunded; expired: the closed view', async () => {
      const { page, problems } = await browser.open();
      const short = await invoiceFor(server, token);
      await proceed(server, short, 'trc20usdt');
      await page.goto(`${server.url}/pay/${short}`);
      await page.locator('[data-address]').waitFor();
      // Final at once (19 confirmations), 5 short.
      const due = (await server.request('GET', `/api/invoices/v1/regular/${short}`)).body.paymentDetails.amount as string;
      const paid = new Money(due).minus(5).toFixed();
      await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: short, amount: paid, confirmations: 19 } });
      await page.locator('[data-status-text]', { hasText: `The payment is short: ${paid} USDT of ${due} USDT arrived.` }).waitFor();
      expect(await page.locator('.status').textContent()).toContain(`Send the remaining ${new Money(due).minus(paid).toFixed(due.split('.')[1]?.length ?? 0)} USDT to the same address`);
      // The amount to send, and what a wallet gets, is the rest.
      const rest = new Money(due).minus(paid);
      expect(await page.locator('[data-amount]').getAttribute('data-amount')).toBe(rest.toFixed(due.split('.')[1]?.length ?? 0));
      await screenshot(page, `checkout-wrong-${kind}`);
      // A second short top-up (still not enough): the page follows what is left, without a status change.
      await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: short, amount: '2', confirmations: 19 } });
      await expect
        .poll(() => page.locator('[data-amount]').getAttribute('data-amount'), { timeout: 15_000 })
        .toBe(rest.minus(2).toFixed(due.split('.')[1]?.length ?? 0));
      // The merchant declines it: the client sees where the money goes back.
      const refund = await server.request('POST', `/api/invoices/v1/regular/${short}/refund`, { token, json: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } });
      expect(refund.status).toBe(200);
      await page.locator('[data-status-text]', { hasText: 'The payment was refunded.' }).waitFor();
      expect(await page.locator('.status').textContent()).toContain('goes back to TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
      await screenshot(page, `checkout-refunded-${kind}`);

      const expiring = await invoiceFor(server, token);
      await proceed(server, expiring, 'trc20usdt');
      await page.goto(`${server.url}/pay/${expiring}`);
      await page.locator('[data-address]').waitFor();
      await server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes: 31 } });
      await page.locator('[data-status-text]', { hasText: 'This invoice has expired.' }).waitFor();
      expect(await page.locator('.status').textContent()).toContain('the merchant can accept it or refund it');
      await screenshot(page, `checkout-closed-${kind}`);
      // Nothing is asked any more: no payment URI, no QR code.
      const after = await server.graphql('query($id: ID!) { invoice(id: $id) { status paymentUri } }', { id: expiring });
      expect(after.body.data.invoice).toEqual({ status: 'CLOSED', paymentUri: null });
      expect((await fetch(`${server.url}/pay/${expiring}/qr.svg`)).status).toBe(404);
      expect(problems).toEqual([]);
    });

    it('without a WebSocket it falls back to polling, keeps what the client types, and still follows the payment', async () => {
      const id = await invoiceFor(server, token);
      const { page, problems } = await browser.open();
      await page.routeWebSocket(/\/graphql/, (ws) => ws.close());
      await page.goto(`${server.url}/pay/${id}`);
      const email = page.getByLabel('Your e-mail');
      await email.fill('client@example.com');
      await page.locator('[data-polling]').waitFor({ timeout: 15_000 });
      // Polls come and go (every 3 s) without touching the form under the client's fingers.
      await email.focus();
      await page.waitForTimeout(4_000);
      expect(await email.inputValue()).toBe('client@example.com');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('clientEmail');
      await page.getByLabel('Pay in').selectOption('BTC');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      const amount = (await page.locator('[data-amount]').getAttribute('data-amount'))!;
      await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount, confirmations: 2 } });
      await page.locator('[data-status-text]', { hasText: 'Payment complete. Thank you!' }).waitFor({ timeout: 10_000 });
      // The refused sockets are the only console noise.
      expect(problems.filter((p) => !/WebSocket/i.test(p))).toEqual([]);
    });
  });

  describe('views and rules that do not depend on the database', () => {
    const server = useServer('pglite');
    const browser = useBrowser();
    let token = '';
    beforeAll(async () => {
      token = (await server.merchant({ name: 'Corner Café' })).publicToken;
    });

    it('an unknown invoice: a friendly 404 page, in the chosen language', async () => {
      const { page, problems } = await browser.open();
      const response = await page.goto(`${server.url}/pay/7NEVJPgnhf1LzX7p6296iF`);
      expect(response?.status()).toBe(404);
      expect(await page.locator('h1').textContent()).toBe('Invoice not found');
      await screenshot(page, 'checkout-404');
      expect((await page.goto(`${server.url}/pay/%E0%A4%A?lang=de`))?.status()).toBe(404);
      expect(await page.locator('h1').textContent()).toBe('Rechnung nicht gefunden');
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      // Chromium reports the 404 of the page itself; nothing else may fail.
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    });

    it('a 360 px phone: nothing wider than the screen; German with ?lang=de; a fixed currency is preselected and locked', async () => {
      const id = await invoiceFor(server, token, { paymentCurrency: 'btc' });
      const { page, problems } = await browser.open({ width: 360, height: 780 });
      await page.goto(`${server.url}/pay/${id}?lang=de`);
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      const currency = page.getByLabel('Bezahlen mit');
      await currency.waitFor();
      expect(await currency.isDisabled()).toBe(true);
      expect(await currency.inputValue()).toBe('BTC');
      expect(await page.getByText('Der Händler verlangt die Zahlung in dieser Währung.').count()).toBe(1);
      await page.getByLabel('Ihre E-Mail-Adresse').fill('kunde@example.com');
      await page.getByRole('button', { name: 'Weiter zur Zahlung' }).click();
      await page.locator('[data-address]').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      expect(await page.getByText('Senden Sie genau').count()).toBe(1);
      await screenshot(page, 'checkout-phone-de');
      expect(problems).toEqual([]);
    });

    it('the client chooses only among the currencies the merchant accepts', async () => {
      const picky = await server.merchant({ name: 'Picky', acceptedAssets: ['btc', 'usdt'] });
      const id = await invoiceFor(server, picky.publicToken);
      const { page, problems } = await browser.open();
      await page.goto(`${server.url}/pay/${id}`);
      const options = page.getByLabel('Pay in').locator('option');
      await options.first().waitFor({ state: 'attached' });
      expect(await options.evaluateAll((all) => all.map((o) => (o as HTMLOptionElement).value))).toEqual(['', 'BTC', 'TRC20USDT', 'USDTERC20']);
      expect(problems).toEqual([]);
    });

    it('the page\'s language becomes the invoice\'s: the client\'s e-mails are in German from /pay/<id>?lang=de', async () => {
      const id = await invoiceFor(server, token);
      const { page, problems } = await browser.open();
      await page.goto(`${server.url}/pay/${id}?lang=de`);
      await page.getByLabel('Ihre E-Mail-Adresse').fill('kunde@example.com');
      await page.locator('select').selectOption('BTC');
      await page.getByRole('button', { name: 'Weiter zur Zahlung' }).click();
      await page.locator('[data-amount]').waitFor();
      expect((await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id } })).lang).toBe('de');
      expect(problems).toEqual([]);
    });

    it('a bad e-mail is marked on its field, with the message read out', async () => {
      const id = await invoiceFor(server, token);
      const { page, problems } = await browser.open();
      await page.goto(`${server.url}/pay/${id}`);
      await page.getByLabel('Your e-mail').fill('not-an-email');
      await page.getByLabel('Pay in').selectOption('BTC');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      const email = page.getByLabel('Your e-mail');
      await expect.poll(() => email.getAttribute('aria-invalid')).toBe('true');
      const describedBy = (await email.getAttribute('aria-describedby'))!.split(' ');
      const message = await page.locator(`#${describedBy[1]}`).textContent();
      expect(message).toMatch(/e-mail/i);
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('clientEmail');
      expect(problems).toEqual([]);
    });

    it('security headers: a CSP without inline script, no framing, no referrer, nosniff', async () => {
      const id = await invoiceFor(server, token);
      for (const path of [`/pay/${id}`, '/pay/unknown', '/dashboard', `/assets/checkout.js`]) {
        const res = await fetch(`${server.url}${path}`);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp, path).toContain("script-src 'self'");
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).not.toContain('unsafe-inline');
        expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        const body = await res.text();
        if (path !== '/assets/checkout.js') expect(body.match(/<script(?![^>]*\bsrc=)[^>]*>/g), path).toBeNull();
      }
      const page = await fetch(`${server.url}/pay/${id}`, { method: 'POST' });
      expect(page.status).toBe(405);
    });
  });
});
