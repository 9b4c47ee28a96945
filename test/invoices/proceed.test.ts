import { describe, expect, it } from 'vitest';
import { validateAddress } from '../../src/chains/address-formats.ts';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer, type TestServer } from '../support/server.ts';

const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function newInvoice(server: TestServer, invoice: Record<string, unknown> = sampleInvoice(), merchant: Record<string, unknown> = {}) {
  const m = await server.merchant(merchant);
  const res = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: invoice });
  expect(res.status).toBe(201);
  return { merchant: m, invoice: res.body };
}

const proceed = (server: TestServer, id: string, json: unknown, token?: string) =>
  server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json, token });

describe.each(DATABASES)('POST /api/invoices/v1/regular/{id}/proceed on %s', (kind) => {
  const server = useServer(kind);

  it('fills the invoice: e-mail, address, payment details, expiry, status pending, pending event', async () => {
    const { invoice } = await newInvoice(server, sampleInvoice({ redirectURL: 'https://shop.example/done' }));
    const before = Date.now();
    const res = await proceed(server, invoice.id, { clientEmail: 'client@example.com', paymentCurrency: 'eth' });
    expect(res.status).toBe(200);
    const inv = res.body;
    expect(Object.keys(inv)).toEqual(['id', 'status', 'createdAt', 'company', 'invoiceContent', 'redirectURL', 'clientEmail', 'address', 'paymentDetails', 'expiredAt', 'mode', 'paymentLinkId', 'payUrl']);
    expect(inv.status).toBe('pending');
    expect(inv.clientEmail).toBe('client@example.com');
    expect(inv.redirectURL).toBe('https://shop.example/done');
    expect(inv.invoiceContent.paymentCurrency).toBe('eth');
    expect(inv.address).toEqual({ id: expect.any(String), address: expect.any(String), tag: null, asset: 'eth' });
    expect(validateAddress('evm', inv.address.address)).toBe(true);
    // usd 7.75 at the built-in table (eth = 3500 usd): rate 1/3500 to 18 places, amount rounded up to wei.
    // converted = ceil18(7.75 x rate) = 0.002214285714285717; fee = ceil18(1% of that) = 0.000022142857142858.
    expect(inv.paymentDetails).toEqual({
      rate: '0.000285714285714286',
      invoiceFee: '0.000022142857142858',
      amount: '0.002236428571428575',
      paidAmount: '0',
      overpaidAmount: '0',
      // What the rate was made of: test mode's static table (docs/rates.md).
      rateSources: {
        kind: 'static',
        invoiceCurrency: { asset: 'usd', usdPrice: '1', sources: [{ source: 'static', market: 'RATES_FILE', price: '1', usdPrice: '1', fetchedAt: expect.stringMatching(ISO_MS_Z) }] },
        paymentCurrency: { asset: 'eth', usdPrice: '3500', sources: [{ source: 'static', market: 'RATES_FILE', price: '3500', usdPrice: '3500', fetchedAt: expect.stringMatching(ISO_MS_Z) }] },
        spreadPercent: '0',
        computedAt: expect.stringMatching(ISO_MS_Z),
      },
    });
    expect(inv.expiredAt).toMatch(ISO_MS_Z);
    const minutes = (Date.parse(inv.expiredAt) - before) / 60_000;
    expect(minutes).toBeGreaterThan(29.9);
    expect(minutes).toBeLessThan(30.1);
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: invoice.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.payload)).toEqual([
      { invoiceId: invoice.id, status: 'created', message: 'Invoice created' },
      { invoiceId: invoice.id, status: 'pending', message: "User started payment process, but hasn't paid yet" },
    ]);
    // Reading it back gives the same object.
    const read = await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`);
    expect(read.body).toEqual(inv);
  });

  it('gives BTC 120 minutes and checksummed addresses for every network; TON alone gets a tag', async () => {
    const formats: Record<string, string> = { btc: 'btc', eth: 'evm', trc20usdt: 'tron', usdterc20: 'evm', sol: 'sol', ton: 'ton', usdc: 'evm', bnb: 'evm', ltc: 'ltc', trx: 'tron', bch: 'bch' };
    for (const [currency, format] of Object.entries(formats)) {
      const { invoice } = await newInvoice(server);
      const res = await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: currency });
      expect(res.status, currency).toBe(200);
      expect(validateAddress(format as never, res.body.address.address), `${currency} ${res.body.address.address}`).toBe(true);
      if (currency === 'ton') expect(res.body.address.tag).toMatch(/^\d+$/);
      else expect(res.body.address.tag).toBeNull();
      const minutes = (Date.parse(res.body.expiredAt) - Date.parse(res.body.createdAt)) / 60_000;
      expect(Math.round(minutes)).toBe(currency === 'btc' ? 120 : 30);
    }
  });

  it('charges the fee to the client unless the merchant pays it', async () => {
    const clientPays = await newInvoice(server, { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] });
    const a = await proceed(server, clientPays.invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' });
    expect(a.body.paymentDetails).toEqual({ rate: '1', invoiceFee: '1', amount: '101', paidAmount: '0', overpaidAmount: '0', rateSources: expect.any(Object) });
    const merchantPays = await newInvoice(server, { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }], isMerchantPaysFee: true });
    const b = await proceed(server, merchantPays.invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' });
    expect(b.body.paymentDetails).toEqual({ rate: '1', invoiceFee: '1', amount: '100', paidAmount: '0', overpaidAmount: '0', rateSources: expect.any(Object) });
  });

  it('ignores the client currency when the merchant fixed one (and then does not require it)', async () => {
    const { invoice } = await newInvoice(server, sampleInvoice({ paymentCurrency: 'ltc' }));
    const res = await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'btc' });
    expect(res.status).toBe(200);
    expect(res.body.address.asset).toBe('ltc');
    expect(res.body.invoiceContent.paymentCurrency).toBe('ltc');
    const other = await newInvoice(server, sampleInvoice({ paymentCurrency: 'ltc' }));
    expect((await proceed(server, other.invoice.id, { clientEmail: 'c@example.com' })).status).toBe(200);
  });

  it('validates e-mail and payment currency', async () => {
    const { invoice } = await newInvoice(server, sampleInvoice(), { acceptedAssets: ['btc', 'eth'] });
    const bad = await proceed(server, invoice.id, { clientEmail: 'not-an-email', paymentCurrency: 'usdt' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['clientEmail', 'paymentCurrency']);
    const missing = await proceed(server, invoice.id, {});
    expect(missing.status).toBe(422);
    const notAccepted = await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'sol' });
    expect(notAccepted.status).toBe(422);
    expect(notAccepted.body.error.details).toEqual([{ path: 'paymentCurrency', message: 'this merchant does not accept sol' }]);
    // Still untouched.
    expect((await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`)).body.status).toBe('created');
  });

  it('answers a repeat of the same fill with the same invoice and anything else with 409', async () => {
    const { invoice } = await newInvoice(server);
    const first = await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'btc' });
    const same = await proceed(server, invoice.id, { clientEmail: 'C@Example.com', paymentCurrency: 'btc' });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(first.body);
    const other = await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'eth' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('INVOICE_NOT_PROCEEDABLE');
    expect(other.body.error.message).toContain('pending');
    expect(await server.app.db.prisma.event.count({ where: { subjectId: invoice.id, type: 'invoice.pending' } })).toBe(1);
  });

  it('assigns exactly one address and one pending event under concurrent fills', async () => {
    const { invoice } = await newInvoice(server);
    const fills = await Promise.all(
      Array.from({ length: 10 }, (_, i) => proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: i % 2 ? 'btc' : 'eth' })),
    );
    const winners = fills.filter((r) => r.status === 200);
    expect(new Set(winners.map((r) => r.body.address.address)).size).toBe(1);
    for (const r of fills) expect([200, 409]).toContain(r.status);
    expect(await server.app.db.prisma.paymentAddress.count({ where: { invoiceId: invoice.id } })).toBe(1);
    expect(await server.app.db.prisma.event.count({ where: { subjectId: invoice.id, type: 'invoice.pending' } })).toBe(1);
  });

  it('takes an optional token: none is fine, an invalid one is 401, another merchant’s is 404', async () => {
    const { invoice, merchant } = await newInvoice(server);
    expect((await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'btc' }, 'pk_wrong')).status).toBe(401);
    const stranger = await server.merchant();
    expect((await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'btc' }, stranger.publicToken)).status).toBe(404);
    expect((await proceed(server, invoice.id, { clientEmail: 'c@example.com', paymentCurrency: 'btc' }, merchant.publicToken)).status).toBe(200);
  });

  it('answers 404 for unknown invoices', async () => {
    for (const id of ['7NEVJPgnhf1LzX7p6296iF', 'nope', '%00', 'x'.repeat(300)]) {
      const res = await proceed(server, encodeURIComponent(id), { clientEmail: 'c@example.com', paymentCurrency: 'btc' });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });
});

describe.each(DATABASES)('GET /api/invoices/v1/regular/{id} on %s', (kind) => {
  const server = useServer(kind);

  it('is public and shows only the created-time fields before the fill', async () => {
    const { invoice } = await newInvoice(server);
    const res = await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(invoice);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers 404 for unknown ids and 405 for other methods', async () => {
    const res = await server.request('GET', '/api/invoices/v1/regular/7NEVJPgnhf1LzX7p6296iF');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'No invoice with id 7NEVJPgnhf1LzX7p6296iF', details: [], requestId: expect.any(String) });
    const del = await server.request('DELETE', '/api/invoices/v1/regular/7NEVJPgnhf1LzX7p6296iF');
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET');
    expect((await server.request('GET', '/api/nothing-here')).status).toBe(404);
  });
});
