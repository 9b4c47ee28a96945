// Sandbox state is per merchant: a test clock per company, and a chain report is never merged into a transfer
// recorded for another address or merchant.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { sleep } from '../support/processes.ts';
import { useServer, type TestServer } from '../support/server.ts';

async function merchantWithInvoice(server: TestServer) {
  const m = await server.merchant();
  const token = m.publicToken;
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
  return {
    token,
    id: created.body.id as string,
    call: (method: string, path: string, json?: unknown) => server.request(method, path, { token, json }),
    status: async () => (await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status as string,
    available: async () => (await server.request('GET', '/api/company/balances', { token })).body.balances as unknown[],
  };
}

describe.each(DATABASES)('sandbox isolation on %s', (kind) => {
  const server = useServer(kind, { SWEEP_INTERVAL_MS: '100' });

  it('another merchant reusing a transaction hash cannot confirm, credit or re-evaluate the first merchant’s payment', async () => {
    const a = await merchantWithInvoice(server);
    const b = await merchantWithInvoice(server);
    const txHash = randomBytes(32).toString('hex');
    const seenA = await a.call('POST', '/api/sandbox/transfers', { invoiceId: a.id, amount: '101', txHash });
    expect(seenA.status).toBe(201);
    // B reports the same transaction output to B's own invoice, confirmed: refused, nothing changes anywhere.
    const forged = await b.call('POST', '/api/sandbox/transfers', { invoiceId: b.id, amount: '101', txHash, confirmations: 19 });
    expect(forged.status).toBe(409);
    expect(forged.body.error.message).toMatch(/already reported with another address, asset or amount/);
    expect(await a.status()).toBe('processing');
    expect(await b.status()).toBe('pending');
    expect(await a.available()).toEqual([{ asset: 'trc20usdt', available: '0', held: '0', pending: '101', suspense: '0' }]);
    expect(await b.available()).toEqual([]);
    // B cannot act on A's transfer by id either.
    expect((await b.call('POST', `/api/sandbox/transfers/${seenA.body.id}/confirm`)).status).toBe(404);
    expect((await b.call('POST', `/api/sandbox/transfers/${seenA.body.id}/drop`)).status).toBe(404);
    // A's own confirmation works and settles A's invoice once.
    expect((await a.call('POST', `/api/sandbox/transfers/${seenA.body.id}/confirm`)).body.state).toBe('confirmed');
    expect(await a.status()).toBe('done');
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('the same output reported again with another amount or asset is a conflict, not a repeat', async () => {
    const a = await merchantWithInvoice(server);
    const txHash = randomBytes(32).toString('hex');
    expect((await a.call('POST', '/api/sandbox/transfers', { invoiceId: a.id, amount: '10', txHash })).status).toBe(201);
    expect((await a.call('POST', '/api/sandbox/transfers', { invoiceId: a.id, amount: '11', txHash })).status).toBe(409);
    expect((await a.call('POST', '/api/sandbox/transfers', { invoiceId: a.id, amount: '10', txHash, asset: 'usdterc20' })).status).toBe(409);
    // The exact repeat is still an idempotent duplicate.
    expect((await a.call('POST', '/api/sandbox/transfers', { invoiceId: a.id, amount: '10', txHash })).status).toBe(201);
  });

  it('each merchant has its own test clock: one merchant’s advance expires only its own invoices', async () => {
    const a = await merchantWithInvoice(server);
    const b = await merchantWithInvoice(server);
    const advanced = await b.call('POST', '/api/sandbox/clock/advance', { minutes: 31 });
    expect(advanced.body).toMatchObject({ offsetMinutes: 31 });
    // The advance's own sweep closes it, unless the background sweeper (every 100 ms here) saw the new clock first.
    expect([0, 1]).toContain(advanced.body.expired);
    expect(await b.status()).toBe('closed');
    // Several sweeper runs later A's invoice is still open, and A's clock never moved.
    await sleep(400);
    expect(await a.status()).toBe('pending');
    expect((await a.call('GET', '/api/sandbox/clock')).body).toMatchObject({ offsetMinutes: 0 });
    expect((await b.call('GET', '/api/sandbox/clock')).body).toMatchObject({ offsetMinutes: 31 });
    const bNow = Date.parse((await b.call('GET', '/api/sandbox/clock')).body.now);
    expect(bNow - Date.now()).toBeGreaterThan(30 * 60_000);
    // A new invoice of B is created on B's clock.
    const later = await b.call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] });
    expect(Date.parse(later.body.createdAt) - Date.now()).toBeGreaterThan(30 * 60_000);
  });

  it('the expiry sweeper alone (no clock endpoint) closes what is due on each company’s clock', async () => {
    const a = await merchantWithInvoice(server);
    const b = await merchantWithInvoice(server);
    // The clock moves without the endpoint's own sweep: only the background job can close the invoice.
    const company = await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id: b.id }, select: { companyId: true } });
    await server.app.db.prisma.sandboxClock.create({ data: { companyId: company.companyId, offsetMs: 31n * 60_000n } });
    await expect.poll(() => b.status(), { timeout: 5_000, interval: 50 }).toBe('closed');
    expect(await a.status()).toBe('pending');
  });
});
