import { describe, expect, it } from 'vitest';
import { INVOICE_STATUS_MESSAGES } from '../../src/invoices/status.ts';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer, type TestServer } from '../support/server.ts';

const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** A merchant and an invoice for 100 usd filled with `paymentCurrency` (trc20usdt: amount 101, 19 confirmations). */
async function filledInvoice(server: TestServer, paymentCurrency = 'trc20usdt', merchant?: { publicToken: string; companyId: string }) {
  const m = merchant ?? (await server.merchant());
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency } });
  expect(filled.status).toBe(200);
  return { merchant: m, id: created.body.id as string, invoice: filled.body };
}

function helpers(server: TestServer, token: string) {
  return {
    pay: (json: Record<string, unknown>) => server.request('POST', '/api/sandbox/transfers', { token, json }),
    confirm: (id: string, json: Record<string, unknown> = {}) => server.request('POST', `/api/sandbox/transfers/${id}/confirm`, { token, json }),
    drop: (id: string) => server.request('POST', `/api/sandbox/transfers/${id}/drop`, { token }),
    advance: (minutes: number) => server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes } }),
    read: async (id: string) => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body,
    balances: async () => (await server.request('GET', '/api/company/balances', { token })).body.balances,
    // The merchant-visible events (the internal invoice.confirmations steps are for live subscriptions: docs/live.md).
    events: async (invoiceId: string) =>
      (await server.app.db.prisma.event.findMany({ where: { subjectId: invoiceId, type: { not: 'invoice.confirmations' } }, orderBy: { seq: 'asc' } })).map((e) => e.payload as Record<string, string>),
  };
}

const statuses = (events: Record<string, string>[]) => events.map((e) => e.status);

describe.each(DATABASES)('payment lifecycle on %s', (kind) => {
  const server = useServer(kind);

  it('create -> proceed -> transfer -> confirm -> done, with ledger, balances and transactions', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    const seen = await h.pay({ invoiceId: id, amount: '101', from: 'TXYZclientAddress' });
    expect(seen.status).toBe(201);
    expect(seen.body).toMatchObject({ invoiceId: id, asset: 'trc20usdt', amount: '101', confirmations: 0, requiredConfirmations: 19, state: 'seen' });
    expect(seen.body.txHash).toMatch(/^[0-9a-f]{64}$/);
    let inv = await h.read(id);
    expect(inv.status).toBe('processing');
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '0', held: '0', pending: '101', suspense: '0' }]);
    expect(inv.invoiceTransactions).toEqual([
      {
        id: seen.body.id,
        amount: '101',
        from: 'trc20usdt',
        txHash: seen.body.txHash,
        companyId: merchant.companyId,
        invoiceId: id,
        addressId: inv.address.id,
        createdAt: expect.stringMatching(/Z$/),
        status: 'seen',
        confirmations: 0,
        kind: 'payment',
      },
    ]);

    const partial = await h.confirm(seen.body.id, { confirmations: 5 });
    expect(partial.body.state).toBe('seen');
    expect((await h.read(id)).status).toBe('processing');
    // 5 of 19 moved no status: an internal event for live subscriptions, not a webhook.
    const step = await server.app.db.prisma.event.findMany({ where: { subjectId: id, type: 'invoice.confirmations' } });
    expect(step.map((e) => e.payload)).toEqual([{ invoiceId: id, status: 'processing', transferId: seen.body.id, confirmations: 5, requiredConfirmations: 19 }]);
    expect(await server.app.db.prisma.webhookDelivery.count({ where: { eventId: step[0]!.id } })).toBe(0);
    const final = await h.confirm(seen.body.id);
    expect(final.body).toMatchObject({ state: 'confirmed', confirmations: 19 });
    inv = await h.read(id);
    expect(inv.status).toBe('done');
    expect(inv.paymentDetails).toMatchObject({ amount: '101', paidAmount: '101', overpaidAmount: '0' });
    expect(inv.invoiceTransactions[0]).toMatchObject({ status: 'confirmed', confirmations: 19 });
    expect(await h.events(id)).toEqual(
      ['created', 'pending', 'processing', 'done'].map((status) => ({ invoiceId: id, status, message: INVOICE_STATUS_MESSAGES[status as 'done'] })),
    );
    // 101 received, 1 fee to the platform: the merchant has the invoice total.
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '100', held: '0', pending: '0', suspense: '0' }]);
    const entries = await server.app.db.prisma.ledgerEntry.findMany({ where: { invoiceId: id }, orderBy: { createdAt: 'asc' } });
    expect(entries.map((e) => [e.kind, e.account, e.amount.toString()]).sort()).toEqual(
      [
        ['fee', 'merchant_available', '-1'],
        ['fee', 'platform_fees', '1'],
        ['payment', 'chain_external', '-101'],
        ['payment', 'merchant_available', '101'],
      ].sort(),
    );
    // Further confirmations change nothing.
    await h.confirm(seen.body.id, { confirmations: 40 });
    expect(await server.app.db.prisma.event.count({ where: { subjectId: id, type: 'invoice.done' } })).toBe(1);
    expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: id } })).toBe(4);
  });

  it('a transfer reported already final goes straight to done (or wrong)', async () => {
    const a = await filledInvoice(server);
    const h = helpers(server, a.merchant.publicToken);
    await h.pay({ invoiceId: a.id, amount: '101', confirmations: 19 });
    expect(statuses(await h.events(a.id))).toEqual(['created', 'pending', 'done']);
    const b = await filledInvoice(server, 'trc20usdt', a.merchant);
    await h.pay({ invoiceId: b.id, amount: '60', confirmations: 19 });
    expect(statuses(await h.events(b.id))).toEqual(['created', 'pending', 'wrong']);
  });

  it('underpaid -> wrong -> refund -> refunded, funds back through the chain adapter', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    const t = await h.pay({ invoiceId: id, amount: '60' });
    await h.confirm(t.body.id);
    expect((await h.read(id)).status).toBe('wrong');
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '60', held: '0', pending: '0', suspense: '0' }]);

    const bad = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: merchant.publicToken, json: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: 'address', message: 'is not a valid tron address' }]);
    const stranger = await server.merchant();
    expect((await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: stranger.publicToken, json: { address: TRON_ADDRESS } })).status).toBe(404);

    const res = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: merchant.publicToken, json: { address: TRON_ADDRESS } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('refunded');
    // 60 received, the tron network fee (1) paid out of it, 59 sent.
    expect(res.body.refund).toMatchObject({ address: TRON_ADDRESS, tag: null, amount: '59', networkFee: '1', status: 'sent', txHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(statuses(await h.events(id))).toEqual(['created', 'pending', 'processing', 'wrong', 'refunded']);
    expect((await h.events(id)).at(-1)!.message).toBe('Invoice refunded');
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '0', held: '0', pending: '0', suspense: '0' }]);
    const again = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: merchant.publicToken, json: { address: TRON_ADDRESS } });
    expect(again.status).toBe(409);
    expect(await server.app.db.prisma.refund.count({ where: { invoiceId: id } })).toBe(1);
  });

  it('wrong -> accept -> done; accept or refund of a paid or unpaid invoice is a conflict', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    expect((await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token: merchant.publicToken })).status).toBe(409);
    expect((await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: merchant.publicToken, json: { address: TRON_ADDRESS } })).status).toBe(409);
    await h.pay({ invoiceId: id, amount: '90', confirmations: 19 });
    const accepted = await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token: merchant.publicToken });
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe('done');
    expect(statuses(await h.events(id))).toEqual(['created', 'pending', 'wrong', 'done']);
    // The fee (1) is charged on acceptance too.
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '89', held: '0', pending: '0', suspense: '0' }]);
    expect((await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token: merchant.publicToken })).status).toBe(409);
  });

  it('several partial payments add up; a top-up turns wrong into done; overpayment is recorded', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    const a = await h.pay({ invoiceId: id, amount: '40' });
    const b = await h.pay({ invoiceId: id, amount: '61' });
    await h.confirm(a.body.id);
    expect((await h.read(id)).status).toBe('processing'); // b is still unconfirmed and may complete it
    await h.confirm(b.body.id);
    expect((await h.read(id)).status).toBe('done');

    const o = await filledInvoice(server, 'trc20usdt', merchant);
    await h.pay({ invoiceId: o.id, amount: '50', confirmations: 19 });
    expect((await h.read(o.id)).status).toBe('wrong');
    await h.pay({ invoiceId: o.id, amount: '70', confirmations: 19 });
    const over = await h.read(o.id);
    expect(over.status).toBe('done');
    expect(over.paymentDetails).toMatchObject({ paidAmount: '120', overpaidAmount: '19' });
    expect(over.invoiceTransactions).toHaveLength(2);
    expect(statuses(await h.events(o.id))).toEqual(['created', 'pending', 'wrong', 'done']);
  });

  it('expires from pending after 30 minutes and from processing; BTC gets 120 minutes', async () => {
    const m = await server.merchant();
    const h = helpers(server, m.publicToken);
    const pending = await filledInvoice(server, 'trc20usdt', m);
    const processing = await filledInvoice(server, 'trc20usdt', m);
    const btc = await filledInvoice(server, 'btc', m);
    const btcProcessing = await filledInvoice(server, 'btc', m);
    await h.pay({ invoiceId: processing.id, amount: '101' });
    await h.pay({ invoiceId: btcProcessing.id, amount: '0.0001' });
    const early = await h.advance(29);
    expect(early.status).toBe(200);
    expect((await h.read(pending.id)).status).toBe('pending');
    await h.advance(2);
    expect((await h.read(pending.id)).status).toBe('closed');
    expect((await h.read(processing.id)).status).toBe('closed');
    expect((await h.read(btc.id)).status).toBe('pending');
    await h.advance(60);
    expect((await h.read(btc.id)).status).toBe('pending');
    const late = await h.advance(30);
    expect(late.body.expired).toBeGreaterThanOrEqual(2);
    expect((await h.read(btc.id)).status).toBe('closed');
    expect((await h.read(btcProcessing.id)).status).toBe('closed');
    expect(statuses(await h.events(processing.id))).toEqual(['created', 'pending', 'processing', 'closed']);
    expect((await h.events(pending.id)).at(-1)).toEqual({ invoiceId: pending.id, status: 'closed', message: 'Invoice closed' });
    // No double close.
    await h.advance(60);
    expect(await server.app.db.prisma.event.count({ where: { subjectId: pending.id, type: 'invoice.closed' } })).toBe(1);
    expect((await server.request('POST', `/api/invoices/v1/regular/${pending.id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' } })).status).toBe(200);
  });

  it('a payment after expiry is recorded as late, announced, and can still be accepted', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    await h.advance(31);
    expect((await h.read(id)).status).toBe('closed');
    const t = await h.pay({ invoiceId: id, amount: '101', confirmations: 19 });
    expect(t.status).toBe(201);
    const inv = await h.read(id);
    expect(inv.status).toBe('closed');
    expect(inv.invoiceTransactions).toEqual([expect.objectContaining({ kind: 'late', status: 'confirmed', amount: '101' })]);
    expect(inv.paymentDetails.paidAmount).toBe('101');
    const late = await server.app.db.prisma.event.findMany({ where: { subjectId: id, type: 'invoice.late_payment' } });
    expect(late.map((e) => e.payload)).toEqual([
      { invoiceId: id, status: 'closed', message: 'Payment received after the invoice closed', asset: 'trc20usdt', amount: '101', txHash: t.body.txHash },
    ]);
    expect(await h.balances()).toEqual([{ asset: 'trc20usdt', available: '101', held: '0', pending: '0', suspense: '0' }]);
    const accepted = await server.request('POST', `/api/invoices/v1/regular/${id}/accept`, { token: merchant.publicToken });
    expect(accepted.body.status).toBe('done');
  });

  it('duplicate reports of the same transaction output are idempotent; another output counts', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    const txHash = 'a'.repeat(64);
    const first = await h.pay({ invoiceId: id, amount: '50', txHash, confirmations: 19 });
    const dup = await h.pay({ invoiceId: id, amount: '50', txHash, confirmations: 19 });
    expect(dup.body.id).toBe(first.body.id);
    expect((await h.read(id)).paymentDetails.paidAmount).toBe('50');
    const second = await h.pay({ invoiceId: id, amount: '51', txHash, outputIndex: 1, confirmations: 19 });
    expect(second.body.id).not.toBe(first.body.id);
    expect((await h.read(id)).status).toBe('done');
    expect(await server.app.db.prisma.ledgerEntry.count({ where: { invoiceId: id, kind: 'payment' } })).toBe(4);
  });

  it('a transfer that drops before confirmation does not count; the invoice then expires', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    const t = await h.pay({ invoiceId: id, amount: '101' });
    const dropped = await h.drop(t.body.id);
    expect(dropped.body.state).toBe('dropped');
    expect((await h.read(id)).status).toBe('processing');
    expect((await h.confirm(t.body.id)).status).toBe(409);
    expect(await h.balances()).toEqual([]);
    await h.advance(31);
    const inv = await h.read(id);
    expect(inv.status).toBe('closed');
    expect(inv.invoiceTransactions[0]).toMatchObject({ status: 'dropped' });
    // A final transfer cannot drop.
    const other = await filledInvoice(server, 'trc20usdt', merchant);
    const final = await h.pay({ invoiceId: other.id, amount: '101', confirmations: 19 });
    expect((await h.drop(final.body.id)).status).toBe(409);
  });

  it('a payment in another asset to the address is held in suspense and does not pay the invoice', async () => {
    const { merchant, id } = await filledInvoice(server, 'eth');
    const h = helpers(server, merchant.publicToken);
    const t = await h.pay({ invoiceId: id, amount: '30', asset: 'usdterc20', confirmations: 12 });
    expect(t.body).toMatchObject({ asset: 'usdterc20', state: 'confirmed' });
    const inv = await h.read(id);
    expect(inv.status).toBe('pending');
    expect(inv.paymentDetails.paidAmount).toBe('0');
    expect(inv.invoiceTransactions).toEqual([expect.objectContaining({ kind: 'wrong_asset', from: 'usdterc20' })]);
    expect(await h.balances()).toEqual([{ asset: 'usdterc20', available: '0', held: '0', pending: '0', suspense: '30' }]);
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: id, type: 'invoice.unexpected_asset' } });
    expect(events).toHaveLength(1);
  });

  it('underpayment limits: inside the limit is done, outside is wrong', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    const h = helpers(server, token);
    expect((await server.request('GET', '/api/company/underpayment-limits', { token })).body).toEqual({ limits: {} });
    const set = await server.request('PATCH', '/api/company/underpayment-limits', { token, json: { limits: { usdt: { fixed: '0.5', percent: '1' }, btc: { fixed: '0.00001' } } } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ limits: { btc: { fixed: '0.00001', percent: null }, usdt: { fixed: '0.5', percent: '1' } } });
    // Tolerance for 101: max(0.5, 1% = 1.01) = 1.01.
    const inside = await filledInvoice(server, 'trc20usdt', m);
    await h.pay({ invoiceId: inside.id, amount: '99.99', confirmations: 19 });
    expect((await h.read(inside.id)).status).toBe('done');
    const outside = await filledInvoice(server, 'trc20usdt', m);
    await h.pay({ invoiceId: outside.id, amount: '99.98', confirmations: 19 });
    expect((await h.read(outside.id)).status).toBe('wrong');
    const removed = await server.request('PATCH', '/api/company/underpayment-limits', { token, json: { limits: { usdt: null } } });
    expect(removed.body).toEqual({ limits: { btc: { fixed: '0.00001', percent: null } } });
    const invalid = await server.request('PATCH', '/api/company/underpayment-limits', { token, json: { limits: { doge: {}, btc: { percent: '150' } } } });
    expect(invalid.status).toBe(422);
    expect((await server.request('GET', '/api/company/underpayment-limits')).status).toBe(401);
  });

  it('validates sandbox requests', async () => {
    const { merchant, id } = await filledInvoice(server);
    const h = helpers(server, merchant.publicToken);
    expect((await h.pay({ invoiceId: id, amount: '-1' })).status).toBe(422);
    expect((await h.pay({ invoiceId: id, amount: '1.0000001' })).body.error.details).toEqual([{ path: 'amount', message: 'trc20usdt has 6 decimal places' }]);
    expect((await h.pay({ amount: '1' })).status).toBe(422);
    expect((await h.pay({ invoiceId: 'nope', amount: '1' })).status).toBe(404);
    expect((await h.pay({ address: TRON_ADDRESS, amount: '1' })).status).toBe(404);
    const unfilled = await server.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    expect((await h.pay({ invoiceId: unfilled.body.id, amount: '1' })).status).toBe(409);
    const other = await server.merchant();
    expect((await server.request('POST', '/api/sandbox/transfers', { token: other.publicToken, json: { invoiceId: id, amount: '1' } })).status).toBe(404);
    expect((await h.confirm('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.advance(-5)).status).toBe(422);
    expect((await server.request('POST', '/api/sandbox/transfers', { json: { invoiceId: id, amount: '1' } })).status).toBe(401);
    // By address works too.
    const byAddress = await h.pay({ address: (await h.read(id)).address.address, amount: '1' });
    expect(byAddress.status).toBe(201);
  });

  it('keeps the ledger consistent with the chain records: payments, fees, suspense, late payments and refunds', async () => {
    // Its own journals of every kind an invoice books, so the check never runs over an empty ledger.
    const paid = await filledInvoice(server);
    const merchant = paid.merchant;
    const h = helpers(server, merchant.publicToken);
    await h.pay({ invoiceId: paid.id, amount: '101', confirmations: 19 });
    const wrongAsset = await filledInvoice(server, 'eth', merchant);
    await h.pay({ invoiceId: wrongAsset.id, amount: '30', asset: 'usdterc20', confirmations: 12 });
    const late = await filledInvoice(server, 'trc20usdt', merchant);
    await h.advance(31);
    await h.pay({ invoiceId: late.id, amount: '60', confirmations: 19 });
    expect((await server.request('POST', `/api/invoices/v1/regular/${late.id}/refund`, { token: merchant.publicToken, json: { address: TRON_ADDRESS } })).status).toBe(200);
    expect([(await h.read(paid.id)).status, (await h.read(late.id)).status]).toEqual(['done', 'refunded']);

    const report = await verifyLedger(server.app.db.prisma);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    const db = server.app.db.prisma;
    const journals = await db.ledgerEntry.groupBy({ by: ['journalId', 'kind'], where: { companyId: merchant.companyId } });
    expect(journals.map((j) => j.kind).sort()).toEqual(['fee', 'late_payment', 'payment', 'refund', 'unexpected_asset']);
    expect(report.journals).toBeGreaterThanOrEqual(journals.length);
    // The chain records it compared them with: three confirmed transfers in, one refund out.
    expect(await db.chainTransfer.count({ where: { companyId: merchant.companyId, state: 'confirmed' } })).toBe(3);
    expect(await db.refund.count({ where: { companyId: merchant.companyId } })).toBe(1);
  });
});

describe.each(DATABASES)('test mode off on %s', (kind) => {
  const server = useServer(kind, { SANDBOX: '0' });
  it('refuses test-mode tokens with 401 saying so, and the sandbox refuses the live token with 403', async () => {
    const m = await server.merchant();
    const test = await server.request('POST', '/api/invoices/v1/regular', { token: m.test.publicToken, json: sampleInvoice() });
    expect(test.status).toBe(401);
    expect(test.body.error.message).toMatch(/test mode is off/i);
    for (const [method, path] of [
      ['POST', '/api/sandbox/transfers'],
      ['POST', '/api/sandbox/transfers/00000000-0000-4000-8000-000000000000/confirm'],
      ['POST', '/api/sandbox/clock/advance'],
      ['GET', '/api/sandbox/clock'],
    ] as const) {
      const res = await server.request(method, path, { token: m.live.publicToken, json: method === 'POST' ? { minutes: 5, invoiceId: 'x', amount: '1' } : undefined });
      expect(res.status, path).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/test-mode token/) });
    }
  });
});
