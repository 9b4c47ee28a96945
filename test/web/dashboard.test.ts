// The merchant dashboard in real headless Chromium against the running server: sign in with the public token, a new
// invoice appears live without a reload, its detail shows transactions and webhook deliveries, redeliver sends the
// event again (the receiver sees the same webhook-id twice), the webhook test, balances and withdrawals; sign-out
// forgets the token. Test and live mode: the switch, the test banner, one token per mode, each mode's data only,
// keyboard use and axe-core's checks in both modes.
import { AxeBuilder } from '@axe-core/playwright';
import type { Page, WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, screenshot, unlabelledControls, useBrowser } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { startReceiver } from '../support/receiver.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';

/** axe-core's serious and critical findings on the page as it is now (WCAG 2.x A and AA rules and best practices). */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Everything the page's scripts can read from storage: no token may be there. */
const storedText = (page: Page) => page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }) + document.cookie);

const createInvoice = async (server: TestServer, token: string, name: string) => {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name, price: 12 }] } });
  expect(created.status, created.text).toBe(201);
  return created;
};

describe.runIf(CHROMIUM)('the dashboard in Chromium', () => {
  const server = useServer('pglite', { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  const browser = useBrowser();

  it('sign in, live invoices, detail with deliveries, redeliver, webhook test, balances, withdrawals, sign out', { timeout: 90_000 }, async () => {
    const merchant = await server.merchant({ name: 'Corner Café' });
    const token = merchant.publicToken;
    const receiver = await startReceiver(() => merchant.secretKey);
    try {
      await server.request('PUT', '/api/company/settings/webhook-url', { token, json: { webHookUrl: receiver.url } });
      const { page, problems } = await browser.open({ width: 1280, height: 1000 });
      await page.goto(`${server.url}/dashboard`);

      // A wrong token is refused with a message on the field; the right one signs in.
      await page.getByLabel('Public token').fill('pk_wrong');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('That token is not valid.').waitFor();
      expect(await page.getByLabel('Public token').getAttribute('aria-invalid')).toBe('true');
      await page.getByLabel('Public token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as Corner Café').waitFor();
      // The page keeps no token: the session is an httpOnly, SameSite=Strict cookie scripts cannot read.
      expect(await storedText(page)).not.toContain(token);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect(await page.evaluate(() => document.cookie)).toBe('');
      // The audit log (the settings view) shows the webhook URL change made before sign-in (the public token's, no key name).
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.locator('#audit tr[data-audit="webhook_url_changed"]').waitFor();
      expect(await page.locator('#audit tr[data-audit="webhook_url_changed"] td').nth(2).textContent()).toBe('public_token');
      expect((await page.context().cookies()).map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([{ name: 'payrail_session_test', httpOnly: true, sameSite: 'Strict' }]);
      expect(await unlabelledControls(page)).toEqual([]);
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

      // A new invoice shows up live in the invoices view, and follows its status.
      await page.getByRole('link', { name: 'Invoices' }).click();
      const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Tea set', price: 30 }], orderId: 'SO-77', metadata: { table: '4' } } });
      const id = created.body.id as string;
      const row = page.locator(`tr[data-invoice="${id}"]`);
      await row.waitFor();
      expect(await row.getAttribute('data-status')).toBe('CREATED');
      await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
      const due = (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body.paymentDetails.amount as string;
      await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: due, confirmations: 19 } });
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 10_000 }).toBe('DONE');
      expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);

      // The status filter narrows the list to what matches.
      await page.getByLabel('Status').selectOption('CREATED');
      await expect.poll(() => row.count()).toBe(0);
      await page.getByLabel('Status').selectOption('');
      await row.waitFor();

      // Its detail: the transaction and every delivery; redeliver one.
      await receiver.waitFor((got) => got.filter((r) => r.json['invoiceId'] === id).length >= 3, 15_000);
      await page.getByRole('button', { name: `Show ${id}` }).click();
      const detail = page.locator('.detail article');
      await detail.waitFor();
      expect(await detail.locator('table').first().textContent()).toContain(due);
      // The merchant's order reference and metadata.
      const facts = await detail.locator('dl').textContent();
      expect(facts).toContain('OrderSO-77');
      expect(facts).toContain('Metadatatable: 4');
      const deliveries = detail.locator('tr[data-delivery]');
      await expect.poll(() => deliveries.count()).toBeGreaterThanOrEqual(3);
      expect(await deliveries.first().textContent()).toContain('invoice_created');
      const firstId = receiver.received.find((r) => r.json['invoiceId'] === id && r.json['status'] === 'created')!.headers['webhook-id'];
      await deliveries.first().getByRole('button', { name: 'Redeliver' }).click();
      await detail.getByText('Queued for delivery again.').waitFor();
      await receiver.waitFor((got) => got.filter((r) => r.headers['webhook-id'] === firstId).length === 2, 15_000);
      await screenshot(page, 'dashboard');

      // Webhook settings: the URL as set; the test reaches the receiver.
      await page.getByRole('link', { name: 'Webhooks' }).click();
      expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url);
      await page.getByRole('button', { name: 'Send a test webhook' }).click();
      await page.getByText(/The endpoint answered 200 in \d+ ms\./).waitFor();

      // Balances (the overview) show the money of the paid invoice; a withdrawal appears live (payouts).
      await page.getByRole('link', { name: 'Overview' }).click();
      await expect.poll(() => page.locator('#balances table').textContent()).toContain('USDT (TRC20USDT)');
      const withdrawal = await server.request('POST', '/api/transactions/withdraw', {
        token,
        json: { items: [{ amount: '5', tag: '', to: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', asset: 'trc20usdt' }] },
      });
      expect(withdrawal.body[0].success, JSON.stringify(withdrawal.body)).toBe(true);
      await page.getByRole('link', { name: 'Payouts' }).click();
      await page.locator(`tr[data-withdrawal="${withdrawal.body[0].uid}"]`).waitFor();

      // An auto-withdrawal rule, set in the form, shows in the list.
      const rule = page.locator('form.rule');
      await rule.getByLabel('Asset').selectOption('TRC20USDT');
      await rule.getByLabel('Threshold').fill('50');
      await rule.getByLabel('To', { exact: true }).fill('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
      await rule.getByRole('button', { name: 'Save' }).click();
      await page.locator('tr[data-rule="TRC20USDT"]').waitFor();
      expect(await page.locator('tr[data-rule="TRC20USDT"]').textContent()).toContain('50');
      // A bad address is refused with the field named.
      await rule.getByLabel('To', { exact: true }).fill('not-an-address');
      await rule.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('form.rule [role="status"]').textContent()).toMatch(/withdrawalAddress/);
      expect(await unlabelledControls(page)).toEqual([]);

      // Sign-out ends the session: the cookie goes, and a reload asks for the token again.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Public token').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await expect.poll(async () => (await page.context().cookies()).length).toBe(0);
      // The one refused sign-in (HTTP 401) is the only failed request.
      expect(problems.filter((p) => !/status of 401/.test(p)).join('\n')).toBe('');
      expect(problems.filter((p) => /status of 401/.test(p))).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});

describe.runIf(CHROMIUM)('the dashboard in test and live mode', () => {
  describe.each(DATABASES)('on %s', (kind) => {
    const server = useServer(kind);
    const browser = useBrowser();

    it('test mode is marked; the switch asks for the live token, refuses a test one, shows each mode’s data only, and comes back without asking again', { timeout: 120_000 }, async () => {
      const merchant = await server.merchant({ name: 'Corner Café' });
      const testToken = merchant.test.publicToken;
      const liveToken = merchant.live.publicToken;
      const testInvoice = (await createInvoice(server, testToken, 'Test tea')).body.id as string;
      const { page, problems } = await browser.open({ width: 1280, height: 1000 });
      const sockets: WebSocket[] = [];
      page.on('websocket', (ws) => sockets.push(ws));
      const testRow = page.locator(`tr[data-invoice="${testInvoice}"]`);
      const banner = page.locator('[data-test-banner]');
      const testSwitch = page.getByRole('radio', { name: 'Test mode' });
      const liveSwitch = page.getByRole('radio', { name: 'Live mode' });

      // Signed in with the test token: test mode is chosen on the switch and marked by the banner; test data shows
      // (the invoices view, named in the address).
      await page.goto(`${server.url}/dashboard#invoices`);
      await page.getByLabel('Public token').fill(testToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await testRow.waitFor();
      expect(await testRow.getAttribute('data-mode')).toBe('test');
      expect(await banner.isVisible()).toBe(true);
      expect(await banner.textContent()).toBe('Test mode: payments here are simulated and no real money moves. Switch to live mode for real payments.');
      expect(await testSwitch.isChecked()).toBe(true);
      expect(await liveSwitch.isChecked()).toBe(false);
      expect(await page.title()).toBe('Test mode · Payrail dashboard');
      expect(await storedText(page)).not.toContain(testToken);
      // The test mode's live connection is up (the page subscribes to invoices and withdrawals).
      await expect.poll(() => sockets.length).toBeGreaterThan(0);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `dashboard-test-mode-${kind}`);

      // To live mode: its token is not known yet, so the page asks for it; nothing of test mode stays.
      await page.locator('label', { hasText: 'Live mode' }).click();
      const liveForm = page.getByRole('form', { name: 'Sign in to live mode' });
      await liveForm.waitFor();
      expect(await liveSwitch.isChecked()).toBe(true);
      expect(await testRow.count()).toBe(0);
      expect(await page.locator('#invoices').count()).toBe(0);
      expect(await banner.isVisible()).toBe(false);
      expect(await page.getByText('Signed in as').count()).toBe(0);
      // Test mode's subscriptions are ended with its connection.
      await expect.poll(() => sockets.every((ws) => ws.isClosed())).toBe(true);
      const socketsOfTestMode = sockets.length;

      // The test token is refused there, with the reason on the field.
      const liveField = page.getByLabel('Live-mode public token');
      await liveField.fill(testToken);
      await liveField.press('Enter');
      await page.getByText('That is a test-mode token. Enter the live-mode token (pk_live_…) here.').waitFor();
      expect(await liveField.getAttribute('aria-invalid')).toBe('true');
      expect((await page.context().cookies()).map((c) => c.name)).not.toContain('payrail_session_live');
      expect(await testRow.count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);

      // The live token is taken: live data, no test banner, no test invoice; a live invoice made now appears live.
      await liveField.fill(liveToken);
      await liveField.press('Enter');
      await page.getByText('Signed in as Corner Café').waitFor();
      await page.locator('#invoices').waitFor();
      expect(await banner.isVisible()).toBe(false);
      expect(await page.title()).toBe('Live mode · Payrail dashboard');
      expect(await storedText(page)).not.toContain(liveToken);
      expect((await page.context().cookies()).map((c) => c.name).sort()).toEqual(['payrail_session_live', 'payrail_session_test']);
      await expect.poll(() => sockets.length).toBeGreaterThan(socketsOfTestMode);
      const created = await createInvoice(server, liveToken, 'Live tea');
      expect(created.headers.get('payrail-mode')).toBe('live');
      expect(created.body.mode).toBe('live');
      const liveRow = page.locator(`tr[data-invoice="${created.body.id}"]`);
      await liveRow.waitFor();
      expect(await liveRow.getAttribute('data-mode')).toBe('live');
      expect(await testRow.count()).toBe(0);
      expect(await page.locator('tr[data-invoice]').count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `dashboard-live-mode-${kind}`);

      // Back to test mode: its token is still known, so its data comes back at once; live data is gone.
      await page.locator('label', { hasText: 'Test mode' }).click();
      await testRow.waitFor();
      expect(await liveRow.count()).toBe(0);
      expect(await banner.isVisible()).toBe(true);
      expect(await page.getByRole('form', { name: 'Sign in to test mode' }).count()).toBe(0);

      // Keyboard only, after a reload (the tab keeps both tokens and the mode): Tab reaches the switch, the arrow keys
      // change the mode and the focus stays on the switch.
      await page.reload();
      await testRow.waitFor();
      await page.keyboard.press('Tab');
      expect(await testSwitch.evaluate((el) => el === document.activeElement)).toBe(true);
      await page.keyboard.press('ArrowRight');
      await liveRow.waitFor();
      expect(await liveSwitch.isChecked()).toBe(true);
      expect(await liveSwitch.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await testRow.count()).toBe(0);
      expect(await banner.isVisible()).toBe(false);
      await page.keyboard.press('ArrowLeft');
      await testRow.waitFor();
      expect(await testSwitch.isChecked()).toBe(true);
      expect(await testSwitch.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await liveRow.count()).toBe(0);
      // Space on the chosen mode keeps it (no reload of the data: the row stays the same element).
      await testRow.evaluate((el) => el.setAttribute('data-seen', ''));
      await page.keyboard.press('Space');
      expect(await testSwitch.isChecked()).toBe(true);
      expect(await page.locator('tr[data-seen]').count()).toBe(1);

      // German: the switch and the banner.
      await page.goto(`${server.url}/dashboard?lang=de#invoices`);
      await testRow.waitFor();
      expect(await page.getByRole('radio', { name: 'Testmodus' }).isChecked()).toBe(true);
      expect(await page.getByRole('radio', { name: 'Live-Modus' }).count()).toBe(1);
      expect(await banner.textContent()).toBe('Testmodus: Zahlungen sind hier simuliert, es fließt kein echtes Geld. Für echte Zahlungen wechseln Sie in den Live-Modus.');

      // Sign-out ends both sessions.
      await page.getByRole('button', { name: 'Abmelden' }).click();
      await page.getByLabel('Öffentlicher Token').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expect(problems).toEqual([]);
    });
  });
});

describe.runIf(CHROMIUM)('the dashboard e-mails in Chromium', () => {
  const env: Record<string, string> = { EMAIL_POLL_MS: '100' };
  let smtp: TestSmtp | undefined;
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer('pglite', env);
  const browser = useBrowser();

  it('e-mail settings (kinds, addresses, a refused address on its field) and the e-mails of an invoice', { timeout: 60_000 }, async () => {
    const merchant = await server.merchant({ name: 'Corner Café' });
    const token = merchant.publicToken;
    const created = await createInvoice(server, token, 'Tea');
    const id = created.body.id as string;
    await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'tea-client@example.com', paymentCurrency: 'trc20usdt' } });
    await smtp!.waitFor(1, 'tea-client@example.com');

    const { page, problems } = await browser.open({ width: 1280, height: 1000 });
    await page.goto(`${server.url}/dashboard`);
    await page.getByLabel('Public token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as Corner Café').waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();

    // Everything on by default, no address.
    const receipt = page.getByLabel('Receipt', { exact: true });
    await expect.poll(() => receipt.isChecked()).toBe(true);
    const addresses = page.getByLabel('Your addresses (separated by commas, at most 5)');
    expect(await addresses.inputValue()).toBe('');
    expect(await unlabelledControls(page)).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);

    const form = page.locator('#emails form');
    await addresses.fill('not an address');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => addresses.getAttribute('aria-invalid')).toBe('true');

    await receipt.uncheck();
    await page.getByLabel('Webhook endpoint failing for over an hour').uncheck();
    await addresses.fill('ops@corner.example, boss@corner.example');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Saved.').waitFor();
    expect(await addresses.getAttribute('aria-invalid')).toBeNull();
    const settings = (await server.request('GET', '/api/company/settings/notifications', { token })).body;
    expect(settings.client.done).toBe(false);
    expect(settings.merchant).toMatchObject({ emails: ['ops@corner.example', 'boss@corner.example'], webhookFailing: false, done: true });

    // The invoice's detail lists its e-mail.
    await page.getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('button', { name: `Show ${id}` }).click();
    const row = page.locator('.detail article tr[data-email]');
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.textContent()).toContain('client.pending');
    expect(await row.textContent()).toContain('tea-client@example.com');
    expect(await row.textContent()).toContain('sent');
    expect(problems).toEqual([]);
  });
});
