// The dashboard's tasks in real headless Chromium against the running server, black-box: sign in; create an invoice
// from the form, copy its checkout link and see it appear live; a sandbox payment shows in the overview's chart and
// table; withdraw with the quote shown first and see the withdrawal go from processing to done on the sandbox chain;
// download both CSV exports of a range; every view reached from the keyboard, passing axe-core (no serious or
// critical finding), in German too, and without horizontal scrolling on a 360 px phone. With SCREENSHOTS=1 it also
// writes docs/images/dashboard-overview.png.
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, readQr, screenshot, unlabelledControls, useBrowser } from '../support/browser.ts';
import { freePort } from '../support/net.ts';
import { ROOT } from '../support/processes.ts';
import { useServer, type TestServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const VIEWS = ['overview', 'invoices', 'links', 'payouts', 'deposits', 'webhooks', 'exports', 'keys', 'settings'];

async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function signIn(page: Page, server: TestServer, token: string, query = ''): Promise<void> {
  await page.goto(`${server.url}/dashboard${query}`);
  await page.locator('input[name="token"]').fill(token);
  await page.locator('input[name="token"]').press('Enter');
  await page.locator('nav.views').waitFor();
}

/** Pays an invoice in full through the sandbox chain (the client's side, as a test would script it). */
async function pay(server: TestServer, token: string, id: string): Promise<void> {
  const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
  expect(proceeded.status, proceeded.text).toBe(200);
  const paid = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: proceeded.body.paymentDetails.amount, confirmations: 19 } });
  expect(paid.status, paid.text).toBe(201);
}

/** How many pixels of the canvas have this colour (the bars of one currency). */
async function pixelsOf(page: Page, selector: string, [r, g, b]: [number, number, number]): Promise<number> {
  const png = PNG.sync.read(await page.locator(selector).screenshot());
  let count = 0;
  for (let i = 0; i < png.data.length; i += 4) if (Math.abs(png.data[i]! - r) < 8 && Math.abs(png.data[i + 1]! - g) < 8 && Math.abs(png.data[i + 2]! - b) < 8) count++;
  return count;
}

describe.runIf(CHROMIUM)('the dashboard tasks in Chromium', () => {
  // The server's public address is its own (a port picked first), so payment links and checkout links open in the browser.
  const env: Record<string, string> = { WEBHOOK_POLL_MS: '100' };
  beforeAll(async () => {
    const port = await freePort();
    Object.assign(env, { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, PAY_URL: `http://127.0.0.1:${port}/pay` });
  });
  const server = useServer('pglite', env);
  const browser = useBrowser();

  it('create an invoice and copy its link, see it live; the overview after a payment; withdraw with the quote to done; both CSVs', { timeout: 150_000 }, async () => {
    const merchant = await server.merchant({ name: 'Corner Café' });
    const token = merchant.publicToken;
    const { page, problems } = await browser.open({ width: 1280, height: 1000 });
    await signIn(page, server, token);
    // The overview is the first view; the navigation marks it.
    expect(await page.locator('a[data-view-link="overview"]').getAttribute('aria-current')).toBe('page');
    await page.getByText('Nothing was received in the last 30 days.').waitFor();

    // New invoice, from the keyboard: the link moves the focus to the view's heading.
    await page.locator('a[data-view-link="invoices"]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('New invoice');
    expect(await page.locator('#view-overview').isHidden()).toBe(true);
    const form = page.locator('form[data-form="create-invoice"]');
    await form.getByLabel('Currency of the prices').selectOption('USD');
    await form.getByLabel('What is sold').fill('Tea set');
    await form.getByLabel('Price', { exact: true }).fill('30');
    await form.getByRole('button', { name: 'Add an item' }).click();
    await form.getByLabel('What is sold').nth(1).fill('Cup');
    await form.getByLabel('Price', { exact: true }).nth(1).fill('-30');
    await form.getByRole('button', { name: 'Create invoice' }).click();
    // A total of nothing is refused, with the reason read out.
    await form.getByText('items: the total of all item prices must be greater than 0').waitFor();
    await form.getByLabel('Price', { exact: true }).nth(1).fill('4.5');
    await form.getByLabel('Price', { exact: true }).nth(1).press('Enter');
    const payUrl = page.locator('[data-pay-url]');
    await payUrl.waitFor();
    const url = (await payUrl.getAttribute('href'))!;
    const id = url.split('/').pop()!;
    expect(await page.getByText(`Invoice ${id} for 34.50 USD is ready.`, { exact: false }).count()).toBe(1);
    await page.getByRole('button', { name: 'Copy checkout link' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    // It appears in the list from its live event.
    const row = page.locator(`tr[data-invoice="${id}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-status')).toBe('CREATED');
    const rest = (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
    expect(rest.invoiceContent.items).toEqual([{ name: 'Tea set', price: '30.00' }, { name: 'Cup', price: '4.50' }]);

    // A sandbox payment: the row turns done live; the overview's table and chart show today's money.
    await pay(server, token, id);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 10_000 }).toBe('DONE');
    await page.locator('a[data-view-link="overview"]').click();
    const today = new Date().toISOString().slice(0, 10);
    const received = page.locator(`tr[data-received="${today} USD"]`);
    await received.waitFor();
    expect(await received.locator('td').allTextContents()).toEqual([today, 'USD', '34.50', '1']);
    expect(await page.locator('tr[data-status-count="DONE"] td').nth(1).textContent()).toBe('1');
    await expect.poll(() => page.locator('canvas[data-chart]').getAttribute('aria-label')).toContain('in USD (paid invoices: 1 × USD)');
    // The bars are drawn in USD's colour (#0b5cad).
    await expect.poll(() => pixelsOf(page, 'canvas[data-chart]', [0x0b, 0x5c, 0xad])).toBeGreaterThan(50);
    await expect.poll(() => page.locator('tr[data-balance="TRC20USDT"]').count()).toBe(1);

    // Withdraw: the quote first (fee, total, minimum, available), then the confirmation; processing, then done.
    await page.locator('a[data-view-link="payouts"]').click();
    const withdraw = page.locator('form[data-form="withdraw"]');
    await withdraw.getByLabel('Asset').selectOption('TRC20USDT');
    await withdraw.getByLabel('Amount').fill('5');
    await withdraw.getByLabel('To address').fill(TRON);
    // Bulk: a second payout, below the minimum, is quoted too and refused on its own.
    await withdraw.getByRole('button', { name: 'Add another payout' }).click();
    await withdraw.getByLabel('Asset').nth(1).selectOption('TRC20USDT');
    await withdraw.getByLabel('Amount').nth(1).fill('1');
    await withdraw.getByLabel('To address').nth(1).fill(TRON);
    await withdraw.getByRole('button', { name: 'Review: fee and total' }).click();
    const quote = page.locator('tr[data-quote="1"]');
    await quote.waitFor();
    const cells = await quote.locator('td').allTextContents();
    const q = (await server.graphql('query { withdrawalQuote(asset: TRC20USDT, amount: "5") { fee total minimum available } }', {}, token)).body.data.withdrawalQuote;
    expect(cells.slice(2, 7)).toEqual(['5', q.fee, q.total, q.minimum, q.available]);
    expect(await quote.getAttribute('data-covered')).toBe('true');
    expect(await page.locator('tr[data-quote="2"] td').nth(5).textContent()).toBe(q.minimum);
    await page.getByRole('button', { name: 'Confirm withdrawal' }).click();
    await page.locator('li[data-result="ok"]').waitFor();
    expect(await page.locator('li[data-result]').evaluateAll((items) => items.map((i) => i.getAttribute('data-result')))).toEqual(['ok', 'refused']);
    const withdrawal = page.locator('tr[data-withdrawal]');
    await withdrawal.waitFor();
    expect(await withdrawal.getAttribute('data-status')).toBe('PROCESSING');
    // Once the sender put it on the (simulated) chain, test mode offers the chain's confirmation.
    const confirm = withdrawal.getByRole('button', { name: /Confirm withdrawal .* on the test chain/ });
    await confirm.waitFor({ timeout: 15_000 });
    await confirm.click();
    await expect.poll(() => withdrawal.getAttribute('data-status'), { timeout: 10_000 }).toBe('DONE');

    // Exports: a range of days, both CSVs downloaded through their links.
    await page.locator('a[data-view-link="exports"]').click();
    await page.getByLabel('From (first day)').fill(today);
    await page.getByLabel('To (last day, included)').fill(today);
    for (const [button, header, rowText] of [
      ['Download ledger CSV', 'entry_id,created_at,journal_id,journal_kind,account,asset,amount,balance_after', id],
      ['Download invoices CSV', 'invoice_id,created_at,status,invoice_currency,total', `${id},`],
    ] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
      const text = fs.readFileSync((await download.path())!, 'utf8');
      const [first, ...rows] = text.trim().split('\r\n');
      expect(first!.startsWith(header), first).toBe(true);
      expect(rows.some((r) => r.includes(rowText)), text).toBe(true);
    }
    expect(await page.locator('a[data-export="INVOICES"]').count()).toBe(1);
    expect(await page.locator('p.error[role="alert"]').textContent()).toBe('');
    expect(problems).toEqual([]);

    if (process.env['SCREENSHOTS']) {
      // The picture for docs/dashboard.md: a second currency today, and both again a day later (the test clock).
      const more = async (invoiceCurrency: string, price: number) =>
        pay(server, token, (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency, items: [{ name: 'More tea', price }] } })).body.id as string);
      await more('eur', 21.9);
      await server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes: 24 * 60 } });
      await more('usd', 18);
      await more('eur', 12.4);
      await page.locator('a[data-view-link="overview"]').click();
      await expect.poll(() => page.locator('tr[data-received]').count(), { timeout: 10_000 }).toBe(4);
      fs.mkdirSync(path.join(ROOT, 'docs', 'images'), { recursive: true });
      await page.locator('#view-overview').screenshot({ path: path.join(ROOT, 'docs', 'images', 'dashboard-overview.png') });
    }
  });

  it('every view: keyboard, labels, axe-core, German, and a 360 px phone without horizontal scrolling', { timeout: 150_000 }, async () => {
    const merchant = await server.merchant({ name: 'Corner Café' });
    const token = merchant.publicToken;
    const id = (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'eur', items: [{ name: 'Tea', price: 3 }] } })).body.id as string;
    await pay(server, token, id);
    const { page, problems } = await browser.open({ width: 1280, height: 1000 });
    await signIn(page, server, token);
    // Tab from the page's start reaches the navigation after the header's controls; each view passes axe-core.
    for (const view of VIEWS) {
      await page.locator(`a[data-view-link="${view}"]`).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator(`#view-${view}`).isVisible()).toBe(true);
      // The fragment navigation blurs the link first, then hashchange gives the heading the focus: wait for the latter.
      await expect.poll(() => page.evaluate(() => document.activeElement?.tagName), { message: view }).toBe('H2');
      await page.waitForLoadState('networkidle');
      expect(await unlabelledControls(page), view).toEqual([]);
      expect(await seriousViolations(page), view).toEqual([]);
      // No request of the view failed (the page reads failures out in its alert line).
      expect(await page.locator('p.error[role="alert"]').textContent(), view).toBe('');
    }
    // The invoice's detail (the view with the most in it) passes too.
    await page.locator('a[data-view-link="invoices"]').click();
    await page.getByRole('button', { name: `Show ${id}` }).click();
    await page.locator('.detail article').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // A short payment: the detail says what accepting and refunding mean; accepted, the invoice is done.
    const short = (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Pot', price: 20 }] } })).body.id as string;
    const filled = await server.request('POST', `/api/invoices/v1/regular/${short}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: short, amount: '10', confirmations: 19 } });
    expect(filled.body.paymentDetails.amount).not.toBe('10');
    await expect.poll(async () => (await server.request('GET', `/api/invoices/v1/regular/${short}`)).body.status, { timeout: 10_000 }).toBe('wrong');
    await page.locator(`tr[data-invoice="${short}"][data-status="WRONG"]`).waitFor();
    await page.getByRole('button', { name: `Show ${short}` }).click();
    const decision = page.locator('.detail .decision');
    await decision.getByText('Accept as paid: the invoice becomes done with the 10 USDT that arrived', { exact: false }).waitFor();
    expect(await decision.textContent()).toContain('Refund: the 10 USDT that arrived goes back to the address the client gives you');
    expect(await seriousViolations(page)).toEqual([]);
    await decision.getByRole('button', { name: 'Accept as paid' }).click();
    await page.locator('.detail [data-detail-status="DONE"]').waitFor();

    // An API key and a static address, made in their forms.
    await page.locator('a[data-view-link="keys"]').click();
    const keys = page.locator('#api-keys');
    await keys.getByLabel('Name', { exact: true }).fill('Shop reader');
    await keys.getByLabel('invoices:read', { exact: true }).check();
    await keys.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('[data-new-token]').textContent()).toMatch(/^rk_/);
    await page.locator('tr[data-api-key]', { hasText: 'Shop reader' }).waitFor();
    await page.locator('a[data-view-link="deposits"]').click();
    await page.getByLabel('Your user id').fill('user-42');
    await page.locator('#static-addresses').getByLabel('Asset').selectOption('TRC20USDT');
    await page.getByRole('button', { name: 'Issue address' }).click();
    await page.locator('tr[data-static-address]', { hasText: 'user-42' }).waitFor();

    // The checkout page's views: the form, waiting for payment, paid.
    const fresh = (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Cake', price: 4 }] } })).body.id as string;
    const checkout = await browser.open({ width: 1024, height: 900 });
    await checkout.page.goto(`${server.url}/pay/${fresh}`);
    await checkout.page.getByLabel('Your e-mail').waitFor();
    expect(await seriousViolations(checkout.page)).toEqual([]);
    await checkout.page.getByLabel('Your e-mail').fill('client@example.com');
    await checkout.page.getByLabel('Pay in').selectOption('TRC20USDT');
    await checkout.page.getByRole('button', { name: 'Continue to payment' }).click();
    await checkout.page.locator('[data-address]').waitFor();
    expect(await seriousViolations(checkout.page)).toEqual([]);
    const due = (await server.request('GET', `/api/invoices/v1/regular/${fresh}`)).body.paymentDetails.amount as string;
    await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: fresh, amount: due, confirmations: 19 } });
    await checkout.page.locator('[data-status-text]', { hasText: 'Payment complete. Thank you!' }).waitFor({ timeout: 10_000 });
    expect(await seriousViolations(checkout.page)).toEqual([]);
    expect(checkout.problems).toEqual([]);

    // German: the navigation and the overview.
    await page.goto(`${server.url}/dashboard?lang=de#overview`);
    await page.getByRole('link', { name: 'Übersicht' }).waitFor();
    expect(await page.locator('nav.views a').allTextContents()).toEqual(['Übersicht', 'Rechnungen', 'Zahlungslinks', 'Auszahlungen', 'Einzahlungen', 'Webhooks', 'Exporte', 'API-Schlüssel', 'Einstellungen']);
    await page.getByText('Die Zahlen').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // A 360 px phone: no view scrolls sideways (wide tables scroll inside their own box).
    const phone = await browser.open({ width: 360, height: 740 });
    await signIn(phone.page, server, token);
    for (const view of VIEWS) {
      await phone.page.locator(`a[data-view-link="${view}"]`).click();
      await expect.poll(() => phone.page.locator(`#view-${view}`).isVisible()).toBe(true);
      await phone.page.waitForLoadState('networkidle');
      expect(await phone.page.evaluate(() => document.documentElement.scrollWidth), view).toBeLessThanOrEqual(360);
    }
    await screenshot(phone.page, 'dashboard-phone');
    expect(problems).toEqual([]);
    expect(phone.problems).toEqual([]);
  });

  it('store settings change the checkout page; a payment link and its QR code open a new invoice with its items; deactivated, it says so', { timeout: 120_000 }, async () => {
    const merchant = await server.merchant({ name: 'Corner Café' });
    const token = merchant.publicToken;
    const { page, problems } = await browser.open({ width: 1280, height: 1000 });
    await signIn(page, server, token);

    // Store settings: an http logo is refused on its field; the new name is saved.
    await page.locator('a[data-view-link="settings"]').click();
    const store = page.locator('form[data-form="store"]');
    await expect.poll(() => store.getByLabel('Store name').inputValue()).toBe('Corner Café');
    await store.getByLabel('Store name').fill('Tea House');
    await store.getByLabel('Logo URL').fill('http://logo.example/tea.png');
    await store.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => store.getByLabel('Logo URL').getAttribute('aria-invalid')).toBe('true');
    await store.getByLabel('Logo URL').fill('');
    await store.getByRole('button', { name: 'Save' }).click();
    await page.locator('#store').getByText('Saved.').waitFor();
    expect((await server.request('GET', '/api/company/settings/store', { token })).body.name).toBe('Tea House');

    // A payment link: made in the form, listed with its address and a QR code that holds it.
    await page.locator('a[data-view-link="links"]').click();
    const form = page.locator('form[data-form="create-link"]');
    await form.getByLabel('Name', { exact: true }).fill('Tea for two');
    await form.getByLabel('Currency of the prices').selectOption('EUR');
    await form.getByLabel('What is sold').fill('Tea');
    await form.getByLabel('Price', { exact: true }).fill('7.5');
    await form.getByRole('button', { name: 'Add an item' }).click();
    await form.getByLabel('What is sold').nth(1).fill('Scone');
    await form.getByLabel('Price', { exact: true }).nth(1).fill('3');
    await form.getByRole('button', { name: 'Create payment link' }).click();
    const card = page.locator('article[data-link]');
    await card.waitFor();
    expect(await card.getAttribute('data-active')).toBe('true');
    const linkUrl = (await card.locator('[data-link-url]').getAttribute('href'))!;
    expect(linkUrl).toMatch(new RegExp(`^${server.url}/l/`));
    await expect.poll(() => readQr(page, 'canvas[data-link-qr]')).toBe(linkUrl);
    expect(await seriousViolations(page)).toEqual([]);

    // Opened in a new page: a new invoice with the link's items, on its checkout page under the store's new name.
    const client = await browser.open();
    await client.page.goto(linkUrl);
    await expect.poll(() => client.page.url()).toMatch(new RegExp(`^${server.url}/pay/[^/]+$`));
    await expect.poll(() => client.page.locator('h1').textContent()).toBe('Tea House');
    expect(await client.page.locator('.order .total').textContent()).toBe('10.50 EUR');
    expect(await client.page.locator('.order').textContent()).toContain('Scone');
    const invoiceId = client.page.url().split('/').pop()!;
    // The dashboard lists it live.
    await page.locator('a[data-view-link="invoices"]').click();
    await page.locator(`tr[data-invoice="${invoiceId}"]`).waitFor();

    // Deactivated: the card says so, and opening the link shows a page saying it is off.
    await page.locator('a[data-view-link="links"]').click();
    await card.getByRole('button', { name: 'Deactivate payment link Tea for two' }).click();
    await expect.poll(() => card.getAttribute('data-active')).toBe('false');
    const again = await client.page.goto(linkUrl);
    expect(again?.status()).toBe(410);
    expect(await client.page.locator('h1').count()).toBe(1);
    expect(problems).toEqual([]);
    // The 410 of the deactivated link is the only failed request of the client's page.
    expect(client.problems.filter((p) => !/status of 410/.test(p))).toEqual([]);
  });
});
