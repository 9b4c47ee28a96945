// The money an invoice leaves behind, pinned to the unit: the balance after an overpayment, the fee and balance after
// a late or short payment is accepted, and the refund of a late payment (what is sent, its network fee, what the
// sandbox chain broadcast). Every figure is worked out below from the documented rules (docs/money.md, "The quote
// at proceed"; docs/payments.md, "The ledger" and "Refunds"), not read back from the code, and each case ends with
// ledger:verify over the journals it wrote.
//
// The invoice of every case: 100 USD paid in BTC (the example of docs/money.md), built-in rate table, default fee
// of 1% paid by the client:
//   rate       = 1 / 95000 to 18 places, half-even       = 0.000010526315789474
//   converted  = ceil(100 x rate) to 8 places           = 0.00105264
//   invoiceFee = ceil(0.00105264 x 1 / 100) to 8 places  = 0.00001053
//   amount     = converted + invoiceFee                  = 0.00106317
// BTC needs 2 confirmations, its payment window is 120 minutes, its network fee (a refund's) is 0.00002.
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const QUOTE = { rate: '0.000010526315789474', invoiceFee: '0.00001053', amount: '0.00106317' };
const FINAL = 2;
const WINDOW_MINUTES = 120;
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

async function btcInvoice(server: TestServer) {
  const m = await server.merchant();
  const token = m.publicToken;
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'client@example.com', paymentCurrency: 'btc' } });
  expect(filled.status, filled.text).toBe(200);
  expect(filled.body.paymentDetails).toEqual({ ...QUOTE, paidAmount: '0', overpaidAmount: '0', rateSources: expect.any(Object) });
  const call = (method: string, path: string, json?: unknown) => server.request(method, path, { token, json });
  return {
    m,
    id,
    pay: async (amount: string) => {
      const res = await call('POST', '/api/sandbox/transfers', { invoiceId: id, amount, confirmations: FINAL });
      expect(res.status, res.text).toBe(201);
      expect(res.body.state).toBe('confirmed');
      return res.body as { id: string; txHash: string };
    },
    /** Past the payment window: the invoice closes (pending, nothing paid). */
    expire: async () => {
      const res = await call('POST', '/api/sandbox/clock/advance', { minutes: WINDOW_MINUTES + 1 });
      expect(res.status, res.text).toBe(200);
    },
    accept: () => call('POST', `/api/invoices/v1/regular/${id}/accept`),
    refund: (json: unknown) => call('POST', `/api/invoices/v1/regular/${id}/refund`, json),
    read: async () => (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body,
    balances: async () => (await call('GET', '/api/company/balances')).body.balances,
    /** What the invoice charged (not in the API's invoice object; the invoice export shows it). */
    stored: () => server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { feeCharged: true, acceptedAt: true } }),
    /** The invoice's ledger entries as [kind, account, amount], sorted. */
    entries: async () =>
      (await server.app.db.prisma.ledgerEntry.findMany({ where: { invoiceId: id } })).map((e) => [e.kind, e.account, e.amount.toFixed()]).sort(),
  };
}

const btcBalance = (available: string) => [{ asset: 'btc', available, held: '0', pending: '0', suspense: '0' }];

/** ledger:verify over the whole database, which holds at least the journals this case wrote (`kinds`). */
async function verifiesWith(server: TestServer, invoiceId: string, kinds: string[]) {
  const report = await verifyLedger(server.app.db.prisma);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  const journals = await server.app.db.prisma.ledgerEntry.groupBy({ by: ['journalId', 'kind'], where: { invoiceId } });
  expect(journals.map((j) => j.kind).sort()).toEqual([...kinds].sort());
  expect(report.journals).toBeGreaterThanOrEqual(journals.length);
}

describe.each(DATABASES)('money results on %s', (kind) => {
  const server = useServer(kind);

  it('an overpaid invoice is done; the merchant keeps the excess and pays the quoted fee only', async () => {
    const inv = await btcInvoice(server);
    await inv.pay('0.0015');
    const done = await inv.read();
    expect(done.status).toBe('done');
    // overpaid = 0.0015 - 0.00106317.
    expect(done.paymentDetails).toEqual({ ...QUOTE, paidAmount: '0.0015', overpaidAmount: '0.00043683', rateSources: expect.any(Object) });
    // fee = min(invoiceFee, paid) = 0.00001053; available = 0.0015 - 0.00001053.
    expect((await inv.stored()).feeCharged?.toFixed()).toBe('0.00001053');
    expect(await inv.balances()).toEqual(btcBalance('0.00148947'));
    expect(await inv.entries()).toEqual(
      [
        ['payment', 'chain_external', '-0.0015'],
        ['payment', 'merchant_available', '0.0015'],
        ['fee', 'merchant_available', '-0.00001053'],
        ['fee', 'platform_fees', '0.00001053'],
      ].sort(),
    );
    await verifiesWith(server, inv.id, ['payment', 'fee']);
  });

  it('a late payment is credited without a fee; accepted, it pays the quoted fee', async () => {
    const inv = await btcInvoice(server);
    await inv.expire();
    expect((await inv.read()).status).toBe('closed');
    await inv.pay(QUOTE.amount);
    const late = await inv.read();
    expect(late.status).toBe('closed');
    expect(late.paymentDetails).toEqual({ ...QUOTE, paidAmount: '0.00106317', overpaidAmount: '0', rateSources: expect.any(Object) });
    expect(late.invoiceTransactions).toEqual([expect.objectContaining({ kind: 'late', status: 'confirmed', amount: '0.00106317' })]);
    expect((await inv.stored()).feeCharged).toBeNull();
    expect(await inv.balances()).toEqual(btcBalance('0.00106317'));

    const accepted = await inv.accept();
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.status).toBe('done');
    // fee = min(0.00001053, 0.00106317) = 0.00001053; available = 0.00106317 - 0.00001053 (the converted total).
    const stored = await inv.stored();
    expect(stored.feeCharged?.toFixed()).toBe('0.00001053');
    expect(stored.acceptedAt).toBeInstanceOf(Date);
    expect(await inv.balances()).toEqual(btcBalance('0.00105264'));
    expect(await inv.entries()).toEqual(
      [
        ['late_payment', 'chain_external', '-0.00106317'],
        ['late_payment', 'merchant_available', '0.00106317'],
        ['fee', 'merchant_available', '-0.00001053'],
        ['fee', 'platform_fees', '0.00001053'],
      ].sort(),
    );
    await verifiesWith(server, inv.id, ['late_payment', 'fee']);
  });

  it('a refunded late payment: all of it goes back less the network fee, which the sandbox chain broadcast', async () => {
    const inv = await btcInvoice(server);
    await inv.expire();
    await inv.pay(QUOTE.amount);
    expect(await inv.balances()).toEqual(btcBalance('0.00106317'));

    const res = await inv.refund({ address: BTC_ADDRESS });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('refunded');
    // amount = paid - network fee = 0.00106317 - 0.00002.
    expect(res.body.refund).toEqual({
      id: expect.any(String),
      address: BTC_ADDRESS,
      tag: null,
      amount: '0.00104317',
      networkFee: '0.00002',
      status: 'sent',
      txHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      createdAt: expect.any(String),
    });
    expect((await inv.read()).refund).toEqual(res.body.refund);
    const broadcasts = await server.app.db.prisma.sandboxBroadcast.findMany({ where: { transferId: res.body.refund.id } });
    expect(broadcasts.map((b) => ({ network: b.network, asset: b.asset, toAddress: b.toAddress, amount: b.amount.toFixed(), txHash: b.txHash, calls: b.calls }))).toEqual([
      { network: 'bitcoin', asset: 'btc', toAddress: BTC_ADDRESS, amount: '0.00104317', txHash: res.body.refund.txHash, calls: 1 },
    ]);
    // Nothing stays with the merchant, and no fee was charged: the invoice never became done.
    expect(await inv.balances()).toEqual(btcBalance('0'));
    expect((await inv.stored()).feeCharged).toBeNull();
    expect(await inv.entries()).toEqual(
      [
        ['late_payment', 'chain_external', '-0.00106317'],
        ['late_payment', 'merchant_available', '0.00106317'],
        ['refund', 'merchant_available', '-0.00106317'],
        ['refund', 'chain_external', '0.00104317'],
        ['refund', 'network_fees', '0.00002'],
      ].sort(),
    );
    await verifiesWith(server, inv.id, ['late_payment', 'refund']);
  });

  it('an accepted short payment pays the quoted fee out of what arrived', async () => {
    const inv = await btcInvoice(server);
    await inv.pay('0.001');
    expect((await inv.read()).status).toBe('wrong');
    expect((await inv.stored()).feeCharged).toBeNull();
    expect(await inv.balances()).toEqual(btcBalance('0.001'));
    const accepted = await inv.accept();
    expect(accepted.body.status, accepted.text).toBe('done');
    expect((await inv.read()).paymentDetails).toEqual({ ...QUOTE, paidAmount: '0.001', overpaidAmount: '0', rateSources: expect.any(Object) });
    // fee = min(0.00001053, 0.001) = 0.00001053; available = 0.001 - 0.00001053.
    expect((await inv.stored()).feeCharged?.toFixed()).toBe('0.00001053');
    expect(await inv.balances()).toEqual(btcBalance('0.00098947'));
    expect(await inv.entries()).toEqual(
      [
        ['payment', 'chain_external', '-0.001'],
        ['payment', 'merchant_available', '0.001'],
        ['fee', 'merchant_available', '-0.00001053'],
        ['fee', 'platform_fees', '0.00001053'],
      ].sort(),
    );
    await verifiesWith(server, inv.id, ['payment', 'fee']);
  });

  it('an accepted payment smaller than the quoted fee pays all of it as the fee, leaving nothing', async () => {
    const inv = await btcInvoice(server);
    await inv.pay('0.00001');
    expect((await inv.read()).status).toBe('wrong');
    const accepted = await inv.accept();
    expect(accepted.body.status, accepted.text).toBe('done');
    // fee = min(0.00001053, 0.00001) = 0.00001: everything that arrived.
    expect((await inv.stored()).feeCharged?.toFixed()).toBe('0.00001');
    expect(await inv.balances()).toEqual(btcBalance('0'));
    expect(await inv.entries()).toEqual(
      [
        ['payment', 'chain_external', '-0.00001'],
        ['payment', 'merchant_available', '0.00001'],
        ['fee', 'merchant_available', '-0.00001'],
        ['fee', 'platform_fees', '0.00001'],
      ].sort(),
    );
    await verifiesWith(server, inv.id, ['payment', 'fee']);
  });
});
