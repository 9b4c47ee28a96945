// Shared by the payment tests: an invoice of 100 USD created and proceeded in trc20usdt, ready to be paid.
import { expect } from 'vitest';
import type { TestMerchant, TestServer } from '../support/server.ts';

/** A new invoice of `m`, proceeded: its id and the amount that pays it in full. */
export async function proceeded(server: TestServer, m: TestMerchant): Promise<{ id: string; amount: string }> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status, created.text).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
  expect(filled.status, filled.text).toBe(200);
  return { id: created.body.id as string, amount: filled.body.paymentDetails.amount as string };
}
