import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

const PAY = `mutation Pay($input: SandboxTransferInput!) {
  sandboxTransfer(input: $input) { __typename ... on SandboxTransferSuccess { data { id txHash state asset amount } } ... on Error { code message details { path message } } }
}`;
const CONFIRM = `mutation Confirm($id: ID!) { confirmSandboxTransfer(id: $id) { __typename ... on ConfirmSandboxTransferSuccess { data { state confirmations } } } }`;
const READ = `query Read($id: ID!) { invoice(id: $id) { status paymentDetails { paidAmount overpaidAmount } transactions { amount from kind status confirmations } refund { amount networkFee status } } }`;

describe.each(DATABASES)('GraphQL payments on %s', (kind) => {
  const server = useServer(kind);

  async function filled(token: string) {
    const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 100 }] } });
    await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    return created.body.id as string;
  }

  it('pays through the sandbox, then shows transactions and balances', async () => {
    const m = await server.merchant();
    const id = await filled(m.publicToken);
    const paid = await server.graphql(PAY, { input: { invoiceId: id, amount: '101' } }, m.publicToken);
    const transfer = paid.body.data.sandboxTransfer;
    expect(transfer).toMatchObject({ __typename: 'SandboxTransferSuccess', data: { state: 'seen', asset: 'TRC20USDT', amount: '101' } });
    const confirmed = await server.graphql(CONFIRM, { id: transfer.data.id }, m.publicToken);
    expect(confirmed.body.data.confirmSandboxTransfer.data).toEqual({ state: 'confirmed', confirmations: 19 });
    const read = (await server.graphql(READ, { id })).body.data.invoice;
    expect(read).toEqual({
      status: 'DONE',
      paymentDetails: { paidAmount: '101', overpaidAmount: '0' },
      transactions: [{ amount: '101', from: 'trc20usdt', kind: 'PAYMENT', status: 'CONFIRMED', confirmations: 19 }],
      refund: null,
    });
    const balances = await server.graphql('{ balances { asset available pending suspense } }', {}, m.publicToken);
    expect(balances.body.data.balances).toEqual([{ asset: 'TRC20USDT', available: '100', pending: '0', suspense: '0' }]);
    const invalid = await server.graphql(PAY, { input: { invoiceId: id, amount: '0' } }, m.publicToken);
    expect(invalid.body.data.sandboxTransfer).toMatchObject({ __typename: 'ValidationError', details: [{ path: 'amount' }] });
  });

  it('refunds and accepts wrong invoices, and sets underpayment limits', async () => {
    const m = await server.merchant();
    const limits = await server.graphql(
      `mutation { setUnderpaymentLimits(limits: [{ asset: USDT, percent: "2" }]) { __typename ... on SetUnderpaymentLimitsSuccess { data { asset fixed percent } } } }`,
      {},
      m.publicToken,
    );
    expect(limits.body.data.setUnderpaymentLimits.data).toEqual([{ asset: 'USDT', fixed: null, percent: '2' }]);
    expect((await server.graphql('{ underpaymentLimits { asset percent } }', {}, m.publicToken)).body.data.underpaymentLimits).toEqual([{ asset: 'USDT', percent: '2' }]);

    const short = await filled(m.publicToken);
    await server.graphql(PAY, { input: { invoiceId: short, amount: '50', confirmations: 19 } }, m.publicToken);
    const refund = await server.graphql(
      `mutation R($input: RefundInvoiceInput!) { refundInvoice(input: $input) { __typename ... on RefundInvoiceSuccess { data { status refund { amount networkFee status } } } ... on Error { code message } } }`,
      { input: { invoiceId: short, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } },
      m.publicToken,
    );
    expect(refund.body.data.refundInvoice).toEqual({ __typename: 'RefundInvoiceSuccess', data: { status: 'REFUNDED', refund: { amount: '49', networkFee: '1', status: 'sent' } } });

    const other = await filled(m.publicToken);
    await server.graphql(PAY, { input: { invoiceId: other, amount: '90', confirmations: 19 } }, m.publicToken);
    const accept = `mutation A($id: ID!) { acceptInvoice(invoiceId: $id) { __typename ... on AcceptInvoiceSuccess { data { status } } ... on Error { code } } }`;
    expect((await server.graphql(accept, { id: other }, m.publicToken)).body.data.acceptInvoice).toEqual({ __typename: 'AcceptInvoiceSuccess', data: { status: 'DONE' } });
    expect((await server.graphql(accept, { id: other }, m.publicToken)).body.data.acceptInvoice).toEqual({ __typename: 'ConflictError', code: 'CONFLICT' });
    expect((await server.graphql(accept, { id: other })).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('advances the sandbox clock', async () => {
    const m = await server.merchant();
    const id = await filled(m.publicToken);
    const res = await server.graphql(`mutation { advanceSandboxClock(minutes: 31) { __typename ... on AdvanceSandboxClockSuccess { data { now expired } } } }`, {}, m.publicToken);
    expect(res.body.data.advanceSandboxClock.data.expired).toBeGreaterThanOrEqual(1);
    expect((await server.graphql(READ, { id })).body.data.invoice.status).toBe('CLOSED');
  });
});
