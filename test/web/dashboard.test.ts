// The merchant dashboard in real headless Chromium against the running server: sign in with the public token, a new
// invoice appears live without a reload, its detail shows transactions and webhook deliveries, redeliver sends the
// event again (the receiver sees the same webhook-id twice), the webhook test, balances and withdrawals; sign-out
// forgets the token.
import { describe, expect, it } from 'vitest';
import { CHROMIUM, screenshot, unlabelledControls, useBrowser } from '../support/browser.ts';
import { startReceiver } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

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
      expect(await page.evaluate(() => sessionStorage.getItem('payrail.publicToken'))).toBe(token);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect(await unlabelledControls(page)).toEqual([]);
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

      // A new invoice shows up live, and follows its status.
      const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Tea set', price: 30 }] } });
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
      const deliveries = detail.locator('tr[data-delivery]');
      await expect.poll(() => deliveries.count()).toBeGreaterThanOrEqual(3);
      expect(await deliveries.first().textContent()).toContain('invoice_created');
      const firstId = receiver.received.find((r) => r.json['invoiceId'] === id && r.json['status'] === 'created')!.headers['webhook-id'];
      await deliveries.first().getByRole('button', { name: 'Redeliver' }).click();
      await detail.getByText('Queued for delivery again.').waitFor();
      await receiver.waitFor((got) => got.filter((r) => r.headers['webhook-id'] === firstId).length === 2, 15_000);
      await screenshot(page, 'dashboard');

      // Webhook settings: the URL as set; the test reaches the receiver.
      expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url);
      await page.getByRole('button', { name: 'Send a test webhook' }).click();
      await page.getByText(/The endpoint answered 200 in \d+ ms\./).waitFor();

      // Balances show the money of the paid invoice; a withdrawal appears live.
      await expect.poll(() => page.locator('#balances table').textContent()).toContain('USDT (TRC20USDT)');
      const withdrawal = await server.request('POST', '/api/transactions/withdraw', {
        token,
        json: { items: [{ amount: '5', tag: '', to: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', asset: 'trc20usdt' }] },
      });
      expect(withdrawal.body[0].success, JSON.stringify(withdrawal.body)).toBe(true);
      await page.locator(`tr[data-withdrawal="${withdrawal.body[0].uid}"]`).waitFor();

      // An auto-withdrawal rule, set in the form, shows in the list.
      await page.getByLabel('Asset').selectOption('TRC20USDT');
      await page.getByLabel('Threshold').fill('50');
      await page.getByLabel('To', { exact: true }).fill('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
      await page.getByRole('button', { name: 'Save' }).last().click();
      await page.locator('tr[data-rule="TRC20USDT"]').waitFor();
      expect(await page.locator('tr[data-rule="TRC20USDT"]').textContent()).toContain('50');
      // A bad address is refused with the field named.
      await page.getByLabel('To', { exact: true }).fill('not-an-address');
      await page.getByRole('button', { name: 'Save' }).last().click();
      await expect.poll(() => page.locator('form.rule [role="status"]').textContent()).toMatch(/withdrawalAddress/);
      expect(await unlabelledControls(page)).toEqual([]);

      // Sign-out forgets the token.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Public token').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      // The one refused sign-in (HTTP 401) is the only failed request.
      expect(problems.filter((p) => !/status of 401/.test(p)).join('\n')).toBe('');
      expect(problems.filter((p) => /status of 401/.test(p))).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
