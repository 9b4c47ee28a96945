// Settlement needs money: only confirmed funds settle an invoice, tolerances are bounded, the fee is charged on
// what settles, a counted (confirmed) transfer cannot drop, and ledger:verify checks statuses against money.
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

async function setup(server: TestServer) {
  const m = await server.merchant();
  const token = m.publicToken;
  const request = (method: string, path: string, json?: unknown) => server.request(method, path, { token, json });
  const invoice = async () => {
    const created = await request('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] });
    const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    expect(filled.body.paymentDetails).toMatchObject({ amount: '101', invoiceFee: '1' });
    return created.body.id as string;
  };
  const read = async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body;
  const stored = (id: string) => server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id } });
  const available = async () => (await request('GET', '/api/company/balances')).body.balances.find((b: { asset: string }) => b.asset === 'trc20usdt')?.available ?? '0';
  return { m, request, invoice, read, stored, available };
}

describe.each(DATABASES)('settlement on %s', (kind) => {
  const server = useServer(kind, { SWEEP_INTERVAL_MS: '100' });

  it('bounds tolerances: percent at most 10; a larger fixed limit is capped at 10% of the amount', async () => {
    const { request } = await setup(server);
    for (const percent of ['100', '10.0001', '-1', '1e3']) {
      const res = await request('PATCH', '/api/company/underpayment-limits', { limits: { usdt: { percent } } });
      expect(res.status, percent).toBe(422);
    }
    expect((await request('PATCH', '/api/company/underpayment-limits', { limits: { usdt: { percent: '10', fixed: '1000' } } })).body).toEqual({
      limits: { usdt: { fixed: '1000', percent: '10' } },
    });
  });

  it('an unconfirmed transfer never settles, whatever the tolerance; dropping it leaves no money and the invoice closes', async () => {
    const { request, invoice, read, stored, available } = await setup(server);
    await request('PATCH', '/api/company/underpayment-limits', { limits: { usdt: { fixed: '1000' } } });
    const id = await invoice();
    const seen = await request('POST', '/api/sandbox/transfers', { invoiceId: id, amount: '1' });
    expect(seen.status).toBe(201);
    expect((await read(id)).status).toBe('processing');
    expect((await stored(id)).feeCharged).toBeNull();
    const dropped = await request('POST', `/api/sandbox/transfers/${seen.body.id}/drop`);
    expect(dropped.body.state).toBe('dropped');
    expect((await read(id)).status).toBe('processing');
    expect(await available()).toBe('0');
    await request('POST', '/api/sandbox/clock/advance', { minutes: 31 });
    expect((await read(id)).status).toBe('closed');
  });

  it('a confirmed payment far below the amount is wrong even with a huge fixed limit; 90% is done and pays the full fee', async () => {
    const { request, invoice, read, stored, available } = await setup(server);
    await request('PATCH', '/api/company/underpayment-limits', { limits: { usdt: { fixed: '1000' } } });
    const short = await invoice();
    await request('POST', '/api/sandbox/transfers', { invoiceId: short, amount: '1', confirmations: 19 });
    expect((await read(short)).status).toBe('wrong');
    const enough = await invoice();
    // 90% of 101 is 90.9.
    await request('POST', '/api/sandbox/transfers', { invoiceId: enough, amount: '90.89', confirmations: 19 });
    expect((await read(enough)).status).toBe('wrong');
    await request('POST', '/api/sandbox/transfers', { invoiceId: enough, amount: '0.01', confirmations: 19 });
    const done = await read(enough);
    expect(done.status).toBe('done');
    expect(done.paymentDetails).toMatchObject({ paidAmount: '90.9' });
    expect((await stored(enough)).feeCharged?.toString()).toBe('1');
    // 1 (short, wrong: no fee) + 90.9 - 1 fee.
    expect(await available()).toBe('90.9');
  });

  it('a counted (confirmed) transfer cannot drop: 409, and neither status nor balance moves', async () => {
    const { request, invoice, read, available } = await setup(server);
    const id = await invoice();
    const paid = await request('POST', '/api/sandbox/transfers', { invoiceId: id, amount: '101', confirmations: 19 });
    expect((await read(id)).status).toBe('done');
    const before = await available();
    const drop = await request('POST', `/api/sandbox/transfers/${paid.body.id}/drop`);
    expect(drop.status).toBe(409);
    expect(drop.body.error.code).toBe('CONFLICT');
    expect((await read(id)).status).toBe('done');
    expect(await available()).toBe(before);
  });

  it('accepting a short payment charges the fee out of what arrived, never zero, and says it was accepted', async () => {
    const { request, invoice, read, stored } = await setup(server);
    const id = await invoice();
    await request('POST', '/api/sandbox/transfers', { invoiceId: id, amount: '0.5', confirmations: 19 });
    expect((await read(id)).status).toBe('wrong');
    expect((await request('POST', `/api/invoices/v1/regular/${id}/accept`)).body.status).toBe('done');
    const row = await stored(id);
    expect(row.feeCharged?.toString()).toBe('0.5');
    expect(row.acceptedAt).toBeInstanceOf(Date);
  });

  it('refund tags: required and validated for TON (never silently replaced), refused where the network has none', async () => {
    const { m, request, read } = await setup(server);
    const created = await request('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 11 }] });
    const id = created.body.id as string;
    const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'ton' } });
    await request('POST', '/api/sandbox/transfers', { invoiceId: id, amount: '1', confirmations: 1 });
    expect((await read(id)).status).toBe('wrong');
    const address = filled.body.address.address as string;
    const refund = (json: unknown) => request('POST', `/api/invoices/v1/regular/${id}/refund`, json);
    for (const tag of [undefined, '', ' 12', '\uFFFD', 'x'.repeat(121), 'a\tb']) {
      const res = await refund({ address, tag });
      expect(res.status, JSON.stringify(tag)).toBe(422);
    }
    // A lone surrogate is not turned into U+FFFD on the way: the edge refuses it.
    const lone = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: m.publicToken, body: `{"address":"${address}","tag":"\\ud800"}`, headers: { 'content-type': 'application/json' } });
    expect(lone.status).toBe(422);
    expect(lone.body.error.details).toEqual([{ path: 'tag', message: 'must be valid Unicode (no unpaired surrogates)' }]);
    const ok = await refund({ address, tag: 'memo-42' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.refund).toMatchObject({ tag: 'memo-42', status: 'sent' });

    const usdt = await (async () => {
      const c = await request('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] });
      await server.request('POST', `/api/invoices/v1/regular/${c.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
      await request('POST', '/api/sandbox/transfers', { invoiceId: c.body.id, amount: '50', confirmations: 19 });
      return c.body.id as string;
    })();
    const tagged = await request('POST', `/api/invoices/v1/regular/${usdt}/refund`, { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', tag: '123' });
    expect(tagged.status).toBe(422);
    expect(tagged.body.error.details).toEqual([{ path: 'tag', message: 'must be empty: trc20usdt has no tags' }]);
    expect((await request('POST', `/api/invoices/v1/regular/${usdt}/refund`, { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', tag: '' })).status).toBe(200);
  });

  it('ledger:verify finds every status consistent with its money', async () => {
    // Its own invoice in every status the check knows, so it never runs over an empty database.
    const { m, request, invoice, read } = await setup(server);
    const pay = (id: string, amount: string, confirmations = 19) => request('POST', '/api/sandbox/transfers', { invoiceId: id, amount, confirmations });
    // Closed: the payment window passes, one with nothing sent, one with a payment seen but never confirmed.
    const closed = await invoice();
    const closedSeen = await invoice();
    await pay(closedSeen, '101', 0);
    await request('POST', '/api/sandbox/clock/advance', { minutes: 31 });
    const created = (await request('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] })).body.id as string;
    const pending = await invoice();
    const processing = await invoice();
    await pay(processing, '101', 0);
    const done = await invoice();
    await pay(done, '101');
    const wrong = await invoice();
    await pay(wrong, '50');
    const accepted = await invoice();
    await pay(accepted, '50');
    expect((await request('POST', `/api/invoices/v1/regular/${accepted}/accept`)).status).toBe(200);
    const refunded = await invoice();
    await pay(refunded, '50');
    expect((await request('POST', `/api/invoices/v1/regular/${refunded}/refund`, { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' })).status).toBe(200);
    const ids = { closed, closedSeen, created, pending, processing, done, wrong, accepted, refunded };
    const statuses = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, (await read(id)).status])));
    expect(statuses).toEqual({ closed: 'closed', closedSeen: 'closed', created: 'created', pending: 'pending', processing: 'processing', done: 'done', wrong: 'wrong', accepted: 'done', refunded: 'refunded' });

    const report = await verifyLedger(server.app.db.prisma);
    expect(report.problems).toEqual([]);
    const journals = await server.app.db.prisma.ledgerEntry.groupBy({ by: ['journalId', 'kind'], where: { companyId: m.companyId } });
    expect(new Set(journals.map((j) => j.kind))).toEqual(new Set(['payment', 'fee', 'refund']));
    expect(report.journals).toBeGreaterThanOrEqual(journals.length);
  });
});
