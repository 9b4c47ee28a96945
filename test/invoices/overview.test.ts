// The dashboard overview's aggregates over GraphQL (invoiceOverview): money received per UTC day and invoice currency
// (invoices paid on two days, placed there with the sandbox test clock), invoices by status, the window, the
// tenant and mode filters, the scope and the bounds of `days`.
import { describe, expect, it } from 'vitest';
import { makeKey } from '../keys/support.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const OVERVIEW = `query ($days: Int) { invoiceOverview(days: $days) {
  from to days timeZone received { day currency amount invoices } invoicesByStatus { status count } } }`;

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Creates an invoice, fills it and pays it in full through the sandbox chain: it becomes done now (test clock). */
async function paidInvoice(server: TestServer, token: string, invoiceCurrency: string, prices: number[]): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency, items: prices.map((price, i) => ({ name: `Item ${i}`, price })) } });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } });
  expect(proceeded.status, proceeded.text).toBe(200);
  const paid = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: proceeded.body.paymentDetails.amount, confirmations: 19 } });
  expect(paid.status, paid.text).toBe(201);
  expect((await server.request('GET', `/api/invoices/v1/regular/${id}`)).body.status).toBe('done');
  return id;
}

describe.each(DATABASES)('the invoice overview on %s', (kind) => {
  const server = useServer(kind);

  it('sums what was received per UTC day and invoice currency, counts invoices by status, per tenant and mode', { timeout: 60_000 }, async () => {
    const m = await server.merchant({ name: 'Overview Café' });
    const token = m.publicToken;
    // Day one: two USD invoices and one EUR invoice paid; one USD invoice left unpaid.
    const dayOne = utcDay(Date.now());
    await paidInvoice(server, token, 'usd', [4.5, 3.25]);
    await paidInvoice(server, token, 'usd', [10]);
    await paidInvoice(server, token, 'eur', [9.99]);
    await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Unpaid', price: 1 }] } });
    // The test clock moves a day on; the unpaid invoice is still created (it was never filled, so it never expires).
    const advanced = await server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes: 24 * 60 } });
    expect(advanced.status, advanced.text).toBe(200);
    const dayTwo = utcDay(Date.now() + DAY_MS);
    await paidInvoice(server, token, 'usd', [2]);

    const res = await server.graphql(OVERVIEW, {}, token);
    expect(res.body.errors).toBeUndefined();
    const overview = res.body.data.invoiceOverview;
    expect(overview.days).toBe(30);
    expect(overview.timeZone).toBe('UTC');
    expect(overview.from).toBe(`${utcDay(Date.now() + DAY_MS - 29 * DAY_MS)}T00:00:00.000Z`);
    expect(Date.parse(overview.to)).toBeGreaterThan(Date.now() + DAY_MS - 60_000);
    expect(overview.received).toEqual([
      { day: dayOne, currency: 'EUR', amount: '9.99', invoices: 1 },
      { day: dayOne, currency: 'USD', amount: '17.75', invoices: 2 },
      { day: dayTwo, currency: 'USD', amount: '2.00', invoices: 1 },
    ]);
    const byStatus = Object.fromEntries(overview.invoicesByStatus.map((s: { status: string; count: number }) => [s.status, s.count]));
    expect(byStatus).toEqual({ CREATED: 1, PENDING: 0, PROCESSING: 0, DONE: 4, WRONG: 0, REFUNDED: 0, CLOSED: 0 });

    // One day: today on the test clock only.
    const today = (await server.graphql(OVERVIEW, { days: 1 }, token)).body.data.invoiceOverview;
    expect(today.received).toEqual([{ day: dayTwo, currency: 'USD', amount: '2.00', invoices: 1 }]);
    expect(today.invoicesByStatus.find((s: { status: string }) => s.status === 'DONE').count).toBe(1);

    // Another merchant, and this merchant's live mode, see nothing of it.
    const other = await server.merchant({ name: 'Other shop' });
    for (const someone of [other.publicToken, m.live.publicToken]) {
      const theirs = (await server.graphql(OVERVIEW, {}, someone)).body.data.invoiceOverview;
      expect(theirs.received).toEqual([]);
      expect(theirs.invoicesByStatus.every((s: { count: number }) => s.count === 0)).toBe(true);
    }

    // invoices:read is needed; a key with it may read.
    const payoutsOnly = await makeKey(server, token, ['payouts:read']);
    expect((await server.graphql(OVERVIEW, {}, payoutsOnly.token)).body.errors[0].extensions.code).toBe('FORBIDDEN');
    const reader = await makeKey(server, token, ['invoices:read']);
    expect((await server.graphql(OVERVIEW, {}, reader.token)).body.data.invoiceOverview.received).toHaveLength(3);
    expect((await server.graphql(OVERVIEW, {})).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses days out of bounds with the field named', async () => {
    const m = await server.merchant();
    for (const days of [0, -1, 367]) {
      const res = await server.graphql(OVERVIEW, { days }, m.publicToken);
      expect(res.body.errors[0].extensions.code, JSON.stringify(res.body)).toBe('VALIDATION_FAILED');
      expect(res.body.errors[0].extensions.details.map((d: { path: string }) => d.path)).toEqual(['days']);
    }
  });
});
