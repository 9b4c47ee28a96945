import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

const PAY = `mutation Pay($input: CreateSandboxTransferInput!) {
  createSandboxTransfer(input: $input) { __typename ... on CreateSandboxTransferSuccess { transfer { id txHash state asset amount money { amount currency } invoice { id } } } ... on Error { code message details { path message } } }
}`;
const CONFIRM = `mutation Confirm($input: ConfirmSandboxTransferInput!) { confirmSandboxTransfer(input: $input) { __typename ... on ConfirmSandboxTransferSuccess { transfer { state confirmations } } ... on Error { code details { path } } } }`;
const READ = `query Read($id: ID!) { invoice(id: $id) { status paymentDetails { paidAmount overpaidAmount paidAmountMoney { amount currency } } transactions { amount from kind status confirmations money { amount currency } invoice { id } address { address } } refund { amount networkFee status amountMoney { amount currency } } } }`;

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
    const transfer = paid.body.data.createSandboxTransfer;
    expect(transfer).toMatchObject({
      __typename: 'CreateSandboxTransferSuccess',
      transfer: { state: 'SEEN', asset: 'TRC20USDT', amount: '101', money: { amount: '101', currency: 'TRC20USDT' }, invoice: { id } },
    });
    // The transfer's global id, not the REST uuid: a raw uuid is refused with a typed error.
    const rawId = await server.graphql(CONFIRM, { input: { id: '2f1c7b4e-8a52-4c1e-9d6f-0b3a5e7c9d21' } }, m.publicToken);
    expect(rawId.body.data.confirmSandboxTransfer).toEqual({ __typename: 'ValidationError', code: 'VALIDATION_FAILED', details: [{ path: 'id' }] });
    const confirmed = await server.graphql(CONFIRM, { input: { id: transfer.transfer.id } }, m.publicToken);
    expect(confirmed.body.data.confirmSandboxTransfer.transfer).toEqual({ state: 'CONFIRMED', confirmations: 19 });
    const read = (await server.graphql(READ, { id })).body.data.invoice;
    const address = (await server.request('GET', `/api/invoices/v1/regular/${id}`)).body.address.address;
    expect(read).toEqual({
      status: 'DONE',
      paymentDetails: { paidAmount: '101', overpaidAmount: '0', paidAmountMoney: { amount: '101', currency: 'TRC20USDT' } },
      transactions: [
        { amount: '101', from: 'TRC20USDT', kind: 'PAYMENT', status: 'CONFIRMED', confirmations: 19, money: { amount: '101', currency: 'TRC20USDT' }, invoice: { id }, address: { address } },
      ],
      refund: null,
    });
    const balances = await server.graphql('{ balances { asset available held pending suspense } }', {}, m.publicToken);
    expect(balances.body.data.balances).toEqual([{ asset: 'TRC20USDT', available: '100', held: '0', pending: '0', suspense: '0' }]);
    const invalid = await server.graphql(PAY, { input: { invoiceId: id, amount: '0' } }, m.publicToken);
    expect(invalid.body.data.createSandboxTransfer).toMatchObject({ __typename: 'ValidationError', details: [{ path: 'amount' }] });
  });

  it('refunds and accepts wrong invoices, and sets underpayment limits', async () => {
    const m = await server.merchant();
    const limits = await server.graphql(
      `mutation { setUnderpaymentLimits(input: { limits: [{ asset: USDT, percent: "2" }] }) { __typename ... on SetUnderpaymentLimitsSuccess { underpaymentLimits { asset fixed percent } } } }`,
      {},
      m.publicToken,
    );
    expect(limits.body.data.setUnderpaymentLimits.underpaymentLimits).toEqual([{ asset: 'USDT', fixed: null, percent: '2' }]);
    expect((await server.graphql('{ underpaymentLimits { asset percent } }', {}, m.publicToken)).body.data.underpaymentLimits).toEqual([{ asset: 'USDT', percent: '2' }]);

    const short = await filled(m.publicToken);
    await server.graphql(PAY, { input: { invoiceId: short, amount: '50', confirmations: 19 } }, m.publicToken);
    const refund = await server.graphql(
      `mutation R($input: RefundInvoiceInput!) { refundInvoice(input: $input) { __typename ... on RefundInvoiceSuccess { invoice { status refund { amount networkFee status amountMoney { amount currency } } } } ... on Error { code message } } }`,
      { input: { invoiceId: short, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } },
      m.publicToken,
    );
    expect(refund.body.data.refundInvoice).toEqual({
      __typename: 'RefundInvoiceSuccess',
      invoice: { status: 'REFUNDED', refund: { amount: '49', networkFee: '1', status: 'SENT', amountMoney: { amount: '49', currency: 'TRC20USDT' } } },
    });

    const other = await filled(m.publicToken);
    await server.graphql(PAY, { input: { invoiceId: other, amount: '90', confirmations: 19 } }, m.publicToken);
    const accept = `mutation A($id: ID!) { acceptInvoice(input: { invoiceId: $id }) { __typename ... on AcceptInvoiceSuccess { invoice { status } } ... on Error { code } } }`;
    expect((await server.graphql(accept, { id: other }, m.publicToken)).body.data.acceptInvoice).toEqual({ __typename: 'AcceptInvoiceSuccess', invoice: { status: 'DONE' } });
    expect((await server.graphql(accept, { id: other }, m.publicToken)).body.data.acceptInvoice).toEqual({ __typename: 'ConflictError', code: 'CONFLICT' });
    expect((await server.graphql(accept, { id: other })).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    // An invoice not filled yet has received nothing to refund: the mutation's typed ConflictError, as REST's 409.
    const unfilled = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    const early = await server.graphql(
      `mutation R($input: RefundInvoiceInput!) { refundInvoice(input: $input) { __typename ... on Error { code message } } }`,
      { input: { invoiceId: unfilled.body.id, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } },
      m.publicToken,
    );
    expect(early.body.errors, early.text).toBeUndefined();
    expect(early.body.data.refundInvoice).toEqual({ __typename: 'ConflictError', code: 'CONFLICT', message: `Invoice ${unfilled.body.id} has received no payment` });
    expect((await server.request('POST', `/api/invoices/v1/regular/${unfilled.body.id}/refund`, { token: m.publicToken, json: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } })).status).toBe(409);
  });

  it('advances the sandbox clock', async () => {
    const m = await server.merchant();
    const id = await filled(m.publicToken);
    const res = await server.graphql(`mutation { advanceSandboxClock(input: { minutes: 31 }) { __typename ... on AdvanceSandboxClockSuccess { clock { now expired } } } }`, {}, m.publicToken);
    expect(res.body.data.advanceSandboxClock.clock.expired).toBeGreaterThanOrEqual(1);
    const fractional = await server.graphql(`mutation { advanceSandboxClock(input: { minutes: 1.5 }) { __typename } }`, {}, m.publicToken);
    expect(fractional.body.errors[0].message).toContain('Int cannot represent non-integer value');
    expect((await server.graphql(READ, { id })).body.data.invoice.status).toBe('CLOSED');
  });
});
