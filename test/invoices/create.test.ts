import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer } from '../support/server.ts';

const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(DATABASES)('POST /api/invoices/v1/regular on %s', (kind) => {
  const server = useServer(kind);
  const create = (token: string | undefined, json: unknown, headers: Record<string, string> = {}) =>
    server.request('POST', '/api/invoices/v1/regular', { token, json, headers });

  it('creates an invoice with every spec field and records the created event', async () => {
    const m = await server.merchant({ name: 'Acme', logoUrl: 'https://acme.example/logo.png', acceptedAssets: ['btc', 'usdt'] });
    const res = await create(m.publicToken, sampleInvoice());
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const inv = res.body;
    expect(Object.keys(inv)).toEqual(['id', 'status', 'createdAt', 'company', 'invoiceContent', 'mode', 'paymentLinkId', 'payUrl']);
    expect(inv.mode).toBe('test');
    expect(inv.paymentLinkId).toBeNull();
    expect(res.headers.get('payrail-mode')).toBe('test');
    expect(inv.id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,24}$/);
    expect(inv.status).toBe('created');
    expect(inv.createdAt).toMatch(ISO_MS_Z);
    expect(inv.company.name).toBe('Acme');
    expect(inv.company.logoUrl).toBe('https://acme.example/logo.png');
    expect(inv.company.assets).toContainEqual({ asset: 'btc', isAllowed: true });
    expect(inv.company.assets).toContainEqual({ asset: 'eth', isAllowed: false });
    expect(inv.company.assets).toHaveLength(11);
    expect(inv.invoiceContent).toEqual({
      invoiceCurrency: 'usd',
      items: [
        { name: 'Coffee', price: '4.50' },
        { name: 'Cake', price: '3.25' },
      ],
      paymentCurrency: null,
      isMerchantPaysFee: false,
      redirectURL: null,
    });
    for (const absent of ['clientEmail', 'address', 'paymentDetails', 'expiredAt', 'redirectURL', 'invoiceTransactions']) {
      expect(inv).not.toHaveProperty(absent);
    }
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: inv.id } });
    expect(events.map((e) => e.payload)).toEqual([{ invoiceId: inv.id, status: 'created', message: 'Invoice created' }]);
    expect(events[0]!.type).toBe('invoice.created');
  });

  it('rounds item prices half away from zero from the exact JSON literal, per currency precision', async () => {
    const m = await server.merchant();
    const res = await server.request('POST', '/api/invoices/v1/regular', {
      token: m.publicToken,
      headers: { 'content-type': 'application/json' },
      // 1.005 is 1.00499999… as a float: only exact parsing rounds it to 1.01.
      body: '{"invoiceCurrency":"usd","items":[{"name":"a","price":1.005},{"name":"b","price":-0.125},{"name":"c","price":0},{"name":"d","price":12345678901234.565}]}',
    });
    expect(res.status).toBe(201);
    expect(res.body.invoiceContent.items.map((i: { price: string }) => i.price)).toEqual(['1.01', '-0.13', '0.00', '12345678901234.57']);

    const btc = await create(m.publicToken, { invoiceCurrency: 'btc', items: [{ name: 'x', price: '0.0000005' }, { name: 'y', price: 0.1234564 }] });
    expect(btc.body.invoiceContent.items.map((i: { price: string }) => i.price)).toEqual(['0.000001', '0.123456']);
    const trx = await create(m.publicToken, { invoiceCurrency: 'trx', items: [{ name: 'x', price: 1.123456785 }] });
    expect(trx.body.invoiceContent.items[0].price).toBe('1.12345679');
    const ton = await create(m.publicToken, { invoiceCurrency: 'ton', items: [{ name: 'x', price: 2.00005 }] });
    expect(ton.body.invoiceContent.items[0].price).toBe('2.0001');
  });

  it('allows zero and negative items when the total is positive, and rejects a total <= 0', async () => {
    const m = await server.merchant();
    const ok = await create(m.publicToken, { invoiceCurrency: 'eur', items: [{ name: 'Item', price: 10 }, { name: 'Discount', price: -9.99 }, { name: 'Gift', price: 0 }] });
    expect(ok.status).toBe(201);
    for (const items of [[{ name: 'a', price: 0 }], [{ name: 'a', price: 5 }, { name: 'b', price: -5 }], [{ name: 'a', price: 0.004 }]]) {
      const res = await create(m.publicToken, { invoiceCurrency: 'usd', items });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details).toContainEqual({ path: 'items', message: 'the total of all item prices must be greater than 0' });
    }
  });

  it('keeps the merchant-fixed payment currency and the fee flag', async () => {
    const m = await server.merchant();
    const res = await create(m.publicToken, sampleInvoice({ paymentCurrency: 'trc20usdt', isMerchantPaysFee: true }));
    expect(res.status).toBe(201);
    expect(res.body.invoiceContent.paymentCurrency).toBe('trc20usdt');
    expect(res.body.invoiceContent.isMerchantPaysFee).toBe(true);
  });

  it('refuses a fixed payment currency the merchant does not accept', async () => {
    const m = await server.merchant({ acceptedAssets: ['btc'] });
    const res = await create(m.publicToken, sampleInvoice({ paymentCurrency: 'eth' }));
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: 'paymentCurrency', message: 'this merchant does not accept eth' }]);
  });

  it('uses the company default redirect URL when none is sent, and shows redirectURL as sent', async () => {
    const m = await server.merchant({ redirectUrl: 'https://shop.example/thanks' });
    const res = await create(m.publicToken, sampleInvoice());
    expect(res.body.invoiceContent.redirectURL).toBeNull();
    const stored = await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.redirectUrl).toBe('https://shop.example/thanks');
    const own = await create(m.publicToken, sampleInvoice({ redirectURL: 'https://shop.example/order/1' }));
    expect(own.body.invoiceContent.redirectURL).toBe('https://shop.example/order/1');
  });

  it('answers 422 with every offending field path', async () => {
    const m = await server.merchant();
    const res = await create(m.publicToken, {
      invoiceCurrency: 'doge',
      items: [{ name: '', price: 'abc' }, { price: 1 }],
      paymentCurrency: 'usdt',
      isMerchantPaysFee: 'yes',
      redirectURL: 'ftp://x',
    });
    expect(res.status).toBe(422);
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(['invoiceCurrency', 'isMerchantPaysFee', 'items.0.name', 'items.0.price', 'items.1.name', 'paymentCurrency', 'redirectURL']);
    expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('limits item count, name length and price magnitude', async () => {
    const m = await server.merchant();
    const many = Array.from({ length: 501 }, (_, i) => ({ name: `i${i}`, price: 1 }));
    expect((await create(m.publicToken, { invoiceCurrency: 'usd', items: many })).status).toBe(422);
    expect((await create(m.publicToken, { invoiceCurrency: 'usd', items: many.slice(0, 500) })).status).toBe(201);
    expect((await create(m.publicToken, { invoiceCurrency: 'usd', items: [{ name: 'x'.repeat(201), price: 1 }] })).status).toBe(422);
    expect((await create(m.publicToken, { invoiceCurrency: 'usd', items: [{ name: 'x', price: '1e16' }] })).status).toBe(422);
    expect((await create(m.publicToken, { invoiceCurrency: 'usd', items: [] })).status).toBe(422);
  });

  it('needs a valid bearer token', async () => {
    const missing = await create(undefined, sampleInvoice());
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.body.error.code).toBe('UNAUTHENTICATED');
    expect((await create('pk_not-a-real-token', sampleInvoice())).status).toBe(401);
    const malformed = await server.request('POST', '/api/invoices/v1/regular', { json: sampleInvoice(), headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
  });

  it('answers malformed, oversized and non-JSON bodies with clear 4xx errors', async () => {
    const m = await server.merchant();
    const bad = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, body: '{"invoiceCurrency":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('MALFORMED_REQUEST');
    const text = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(text.status).toBe(415);
    const big = await server.request('POST', '/api/invoices/v1/regular', {
      token: m.publicToken,
      json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }], pad: 'x'.repeat(300_000) },
    });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const empty = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken });
    expect(empty.status).toBe(422);
    const array = await create(m.publicToken, [1, 2]);
    expect(array.status).toBe(422);
  });

  it('replays an Idempotency-Key instead of creating twice, and refuses its reuse with another body', async () => {
    const m = await server.merchant();
    const first = await create(m.publicToken, sampleInvoice(), { 'idempotency-key': 'order-42' });
    const again = await create(m.publicToken, sampleInvoice(), { 'idempotency-key': 'order-42' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const other = await create(m.publicToken, sampleInvoice({ invoiceCurrency: 'eur' }), { 'idempotency-key': 'order-42' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Keys are per merchant.
    const m2 = await server.merchant();
    const theirs = await create(m2.publicToken, sampleInvoice(), { 'idempotency-key': 'order-42' });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('creates exactly one invoice for concurrent requests with the same Idempotency-Key', async () => {
    const m = await server.merchant();
    const results = await Promise.all(Array.from({ length: 8 }, () => create(m.publicToken, sampleInvoice(), { 'idempotency-key': 'burst' })));
    const ok = results.filter((r) => r.status === 200 || r.status === 201);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of results) expect([200, 201, 409]).toContain(r.status);
    const company = await server.app.db.prisma.company.findFirstOrThrow({ where: { id: m.companyId } });
    expect(await server.app.db.prisma.invoice.count({ where: { companyId: company.id } })).toBe(1);
    expect(await server.app.db.prisma.event.count({ where: { companyId: company.id } })).toBe(1);
  });

  it('ids are unguessable and distinct', async () => {
    const m = await server.merchant();
    const ids = await Promise.all(Array.from({ length: 20 }, async () => (await create(m.publicToken, sampleInvoice())).body.id as string));
    expect(new Set(ids).size).toBe(20);
  });
});
