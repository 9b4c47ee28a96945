// Helpers of the e-mail tests.
import { expect } from 'vitest';
import type { TestMerchant, TestServer } from '../support/server.ts';

export const FAST_EMAIL_ENV = {
  EMAIL_POLL_MS: '100',
  EMAIL_RETRY_MIN_MS: '200',
  EMAIL_RETRY_MAX_MS: '400',
  EMAIL_MAX_ATTEMPTS: '100',
  EMAIL_TIMEOUT_MS: '2000',
  EMAIL_LEASE_MS: '10000',
  MAIL_FROM: 'Payrail Test <payments@payrail.test>',
};

export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A filled invoice (pending) of `merchant` whose client is `clientEmail`. */
export async function proceeded(server: TestServer, merchant: TestMerchant, clientEmail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail, paymentCurrency: 'trc20usdt', ...extra }, headers });
  expect(filled.status).toBe(200);
  return filled.body as { id: string; address: { address: string } };
}

export const emailsOf = async (server: TestServer, merchant: TestMerchant, invoiceId: string) =>
  (await server.request('GET', `/api/company/emails?invoiceId=${invoiceId}`, { token: merchant.publicToken })).body.emails as Record<string, any>[];

