import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer } from '../support/server.ts';

const INVOICE_FIELDS = `
  id status createdAt payUrl
  company { name logoUrl assets { asset isAllowed } }
  content { invoiceCurrency items { name price } paymentCurrency isMerchantPaysFee redirectURL }
  redirectURL clientEmail
  address { id address tag asset }
  paymentDetails { rate invoiceFee amount paidAmount overpaidAmount }
  rateDetails { kind spreadPercent computedAt invoiceCurrency { asset usdPrice sources { source market price usdPrice fetchedAt } } paymentCurrency { asset usdPrice sources { source market price usdPrice fetchedAt } } }
  expiredAt`;

const CREATE = `mutation Create($input: CreateInvoiceInput!) {
  createInvoice(input: $input) {
    __typename
    ... on CreateInvoiceSuccess { invoice { ${INVOICE_FIELDS} } }
    ... on Error { code message details { path message } }
  }
}`;

const PROCEED = `mutation Proceed($input: ProceedInvoiceInput!) {
  proceedInvoice(input: $input) {
    __typename
    ... on ProceedInvoiceSuccess { invoice { ${INVOICE_FIELDS} } }
    ... on Error { code message details { path message } }
  }
}`;

/** The sample invoice as GraphQL input: enum currency, decimals as strings. */
const GQL_SAMPLE = { invoiceCurrency: 'USD', items: sampleInvoice().items.map((i) => ({ name: i.name, price: String(i.price) })) };

const READ = `query Read($id: ID!) { invoice(id: $id) { ${INVOICE_FIELDS} } }`;

const LIST = `query List($first: Int, $after: String, $filter: InvoiceFilter) {
  invoices(first: $first, after: $after, filter: $filter) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id status createdAt content { items { price } } company { name } } }
    nodes { id }
  }
}`;

const LIST_BACKWARD = `query ListBackward($last: Int, $before: String) { invoices(last: $last, before: $before) { edges { node { id } } } }`;

describe.each(DATABASES)('GraphQL invoices on %s', (kind) => {
  const server = useServer(kind);

  it('creates, proceeds and reads an invoice with the same data as REST', async () => {
    const m = await server.merchant({ name: 'Acme' });
    const created = await server.graphql(CREATE, { input: { invoiceCurrency: 'USD', items: [{ name: 'Coffee', price: '4.505' }, { name: 'Cake', price: '3.25' }] } }, m.publicToken);
    expect(created.status).toBe(200);
    expect(created.body.errors).toBeUndefined();
    const inv = created.body.data.createInvoice;
    expect(inv.__typename).toBe('CreateInvoiceSuccess');
    expect(inv.invoice.status).toBe('CREATED');
    expect(inv.invoice.content.items).toEqual([
      { name: 'Coffee', price: '4.51' },
      { name: 'Cake', price: '3.25' },
    ]);
    expect(inv.invoice.address).toBeNull();
    expect(inv.invoice.payUrl).toBe(`https://checkout.example/pay/${inv.invoice.id}`);

    const proceeded = await server.graphql(PROCEED, { input: { invoiceId: inv.invoice.id, clientEmail: 'c@example.com', paymentCurrency: 'TRC20USDT' } });
    const filled = proceeded.body.data.proceedInvoice;
    expect(filled.__typename).toBe('ProceedInvoiceSuccess');
    expect(filled.invoice.status).toBe('PENDING');
    expect(filled.invoice.address.asset).toBe('TRC20USDT');
    expect(filled.invoice.address.tag).toBeNull();

    const rest = (await server.request('GET', `/api/invoices/v1/regular/${inv.invoice.id}`)).body;
    const read = (await server.graphql(READ, { id: inv.invoice.id })).body.data.invoice;
    expect(read.id).toBe(rest.id);
    expect(read.status.toLowerCase()).toBe(rest.status);
    expect(read.createdAt).toBe(rest.createdAt);
    expect(read.expiredAt).toBe(rest.expiredAt);
    expect(read.clientEmail).toBe(rest.clientEmail);
    const { rateSources, ...restDetails } = rest.paymentDetails;
    expect(read.paymentDetails).toEqual(restDetails);
    // The rate's audit: REST paymentDetails.rateSources and GraphQL Invoice.rateDetails say the same.
    const side = (s: { asset: string; usdPrice: string; sources: Record<string, string>[] }) => ({ ...s, asset: s.asset.toLowerCase(), sources: s.sources.map((x) => ({ ...x, source: x['source']!.toLowerCase() })) });
    expect({ ...read.rateDetails, kind: read.rateDetails.kind.toLowerCase(), invoiceCurrency: side(read.rateDetails.invoiceCurrency), paymentCurrency: side(read.rateDetails.paymentCurrency) }).toEqual(rateSources);
    expect(rateSources).toMatchObject({ kind: 'static', spreadPercent: '0', invoiceCurrency: { asset: 'usd', usdPrice: '1' }, paymentCurrency: { asset: 'usdt', usdPrice: '1' } });
    // Other nodes' global ids are opaque: base64url of "<Type>:<REST id>".
    expect({ ...read.address, asset: read.address.asset.toLowerCase(), id: Buffer.from(read.address.id, 'base64url').toString() }).toEqual({
      ...rest.address,
      id: `PaymentAddress:${rest.address.id}`,
    });
    expect(read.content.items).toEqual(rest.invoiceContent.items);
    expect(read.company.assets.map((a: { asset: string; isAllowed: boolean }) => ({ asset: a.asset.toLowerCase(), isAllowed: a.isAllowed }))).toEqual(rest.company.assets);
  });

  it('returns typed errors with the REST codes and field paths', async () => {
    const m = await server.merchant();
    const zero = await server.graphql(CREATE, { input: { invoiceCurrency: 'EUR', items: [{ name: 'x', price: '0' }] } }, m.publicToken);
    expect(zero.body.data.createInvoice).toEqual({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      message: 'The request is invalid',
      details: [{ path: 'items', message: 'the total of all item prices must be greater than 0' }],
    });
    const missing = await server.graphql(PROCEED, { input: { invoiceId: '7NEVJPgnhf1LzX7p6296iF', clientEmail: 'c@example.com', paymentCurrency: 'BTC' } });
    expect(missing.body.data.proceedInvoice).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    const created = await server.graphql(CREATE, { input: GQL_SAMPLE }, m.publicToken);
    const id = created.body.data.createInvoice.invoice.id;
    const badEmail = await server.graphql(PROCEED, { input: { invoiceId: id, clientEmail: 'nope', paymentCurrency: 'BTC' } });
    expect(badEmail.body.data.proceedInvoice).toMatchObject({ __typename: 'ValidationError', details: [{ path: 'clientEmail' }] });
    await server.graphql(PROCEED, { input: { invoiceId: id, clientEmail: 'c@example.com', paymentCurrency: 'BTC' } });
    const again = await server.graphql(PROCEED, { input: { invoiceId: id, clientEmail: 'other@example.com', paymentCurrency: 'BTC' } });
    expect(again.body.data.proceedInvoice).toMatchObject({ __typename: 'ConflictError', code: 'INVOICE_NOT_PROCEEDABLE' });
    const badDecimal = await server.graphql(CREATE, { input: { invoiceCurrency: 'USD', items: [{ name: 'x', price: 'ten' }] } }, m.publicToken);
    expect(badDecimal.body.errors[0].message).toContain('Decimal');
    // A JSON number has passed through a float before we see it: refused in variables and as a literal.
    const numberVariable = await server.graphql(CREATE, { input: { invoiceCurrency: 'USD', items: [{ name: 'x', price: 4.5 }] } }, m.publicToken);
    expect(numberVariable.body.errors[0].message).toContain('Decimal must be a decimal number given as a string');
    const numberLiteral = await server.graphql('mutation { createInvoice(input: { invoiceCurrency: USD, items: [{ name: "x", price: 4.5 }] }) { __typename } }', {}, m.publicToken);
    expect(numberLiteral.body.errors[0].message).toContain('Decimal must be a decimal number given as a string');
    expect(numberLiteral.body.data).toBeUndefined();
  });

  it('honours an idempotency key like REST', async () => {
    const m = await server.merchant();
    const input = { ...GQL_SAMPLE, idempotencyKey: 'gql-1' };
    const a = await server.graphql(CREATE, { input }, m.publicToken);
    const b = await server.graphql(CREATE, { input }, m.publicToken);
    expect(b.body.data.createInvoice.invoice.id).toBe(a.body.data.createInvoice.invoice.id);
    const rest = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice(), headers: { 'idempotency-key': 'gql-1' } });
    expect(rest.status).toBe(200);
    expect(rest.body.id).toBe(a.body.data.createInvoice.invoice.id);
    // The same key with another input is a typed error with the REST code (REST answers 422).
    const other = await server.graphql(CREATE, { input: { ...input, items: [{ name: 'Other', price: '1' }] } }, m.publicToken);
    expect(other.body.data.createInvoice).toMatchObject({ __typename: 'ConflictError', code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('requires the merchant token for createInvoice and invoices, not for invoice(id)', async () => {
    const noToken = await server.graphql(CREATE, { input: GQL_SAMPLE });
    expect(noToken.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(noToken.body.data).toBeNull();
    const list = await server.graphql(LIST, {});
    expect(list.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const bad = await server.graphql('{ __typename }', {}, 'pk_bogus');
    expect(bad.status).toBe(401);
    expect(bad.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await server.graphql(READ, { id: 'no-such-invoice' })).body.data.invoice).toBeNull();
  });

  it('lists only the caller’s invoices, newest first, with filters and cursor pagination', async () => {
    const m = await server.merchant();
    const other = await server.merchant();
    await server.request('POST', '/api/invoices/v1/regular', { token: other.publicToken, json: sampleInvoice() });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: `n${i}`, price: i + 1 }] } });
      ids.push(res.body.id);
    }
    await server.request('POST', `/api/invoices/v1/regular/${ids[1]}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'btc' } });

    const page1 = (await server.graphql(LIST, { first: 2 }, m.publicToken)).body.data.invoices;
    expect(page1.totalCount).toBe(5);
    expect(page1.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([ids[4], ids[3]]);
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const page2 = (await server.graphql(LIST, { first: 2, after: page1.pageInfo.endCursor }, m.publicToken)).body.data.invoices;
    expect(page2.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([ids[2], ids[1]]);
    const page3 = (await server.graphql(LIST, { first: 2, after: page2.pageInfo.endCursor }, m.publicToken)).body.data.invoices;
    expect(page3.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([ids[0]]);
    expect(page3.pageInfo.hasNextPage).toBe(false);
    expect(page3.nodes).toEqual([{ id: ids[0] }]);
    const backward = (await server.graphql(LIST_BACKWARD, { last: 2, before: page3.pageInfo.endCursor }, m.publicToken)).body.data.invoices;
    expect(backward.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([ids[2], ids[1]]);
    const forged = await server.graphql(LIST, { first: 1, after: Buffer.from('GPC:S:x; drop table').toString('base64') }, m.publicToken);
    expect(forged.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'after' }] } });

    const pending = (await server.graphql(LIST, { filter: { status: ['PENDING'] } }, m.publicToken)).body.data.invoices;
    expect(pending.totalCount).toBe(1);
    expect(pending.edges[0].node.id).toBe(ids[1]);
    const future = (await server.graphql(LIST, { filter: { createdFrom: new Date(Date.now() + 60_000).toISOString() } }, m.publicToken)).body.data.invoices;
    expect(future.totalCount).toBe(0);
    const past = (await server.graphql(LIST, { filter: { createdBefore: new Date(Date.now() + 60_000).toISOString(), status: ['CREATED'] } }, m.publicToken)).body.data.invoices;
    expect(past.totalCount).toBe(4);
    const countOnly = await server.graphql('query($first: Int) { invoices(first: $first) { totalCount } }', { first: 101 }, m.publicToken);
    expect(countOnly.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'first' }] } });
    const tooMany = await server.graphql(LIST, { first: 1000 }, m.publicToken);
    expect(tooMany.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'first', message: 'must be at most 100' }] } });
  });

  it('serves GraphiQL to browsers and the schema to introspection', async () => {
    const page = await server.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('GraphiQL');
    const intro = await server.graphql('{ __type(name: "Invoice") { fields { name } } }');
    expect(intro.body.data.__type.fields.map((f: { name: string }) => f.name)).toContain('paymentDetails');
  });
});
