// Store settings through the real server (docs/api-decisions.md, "Store settings"): read and patch over REST and GraphQL, only the named
// fields change, for both modes of the account and no other merchant; validation names the field; scopes; each change
// in the audit log of both modes; the defaults (redirectURL, isMerchantPaysFee) reach new invoices at once; accepted
// assets are honoured by proceed and shown by the invoice's company.assets; the checkout page data follows.
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer, type TestServer } from '../support/server.ts';
import { makeKey } from '../keys/support.ts';

const PATH = '/api/company/settings/store';
const STORE_FIELDS = '{ name logoUrl redirectURL acceptedAssets isMerchantPaysFee mode assets { asset isAllowed } }';
const UPDATE = `mutation($i: UpdateStoreSettingsInput!) { updateStoreSettings(input: $i) { __typename
  ... on UpdateStoreSettingsSuccess { storeSettings ${STORE_FIELDS} }
  ... on ValidationError { code details { path message } } } }`;

const patch = (server: TestServer, token: string, json: unknown) => server.request('PATCH', PATH, { token, json });

describe.each(DATABASES)('store settings on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('reads the settings the CLI set; a PATCH changes only the fields named, for both modes, and no other merchant', async () => {
    const m = await server.merchant({ name: 'Acme', logoUrl: 'https://acme.example/logo.png', acceptedAssets: ['btc', 'usdt'] });
    const other = await server.merchant({ name: 'Other' });
    const read = await server.request('GET', PATH, { token: m.publicToken });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({
      name: 'Acme',
      logoUrl: 'https://acme.example/logo.png',
      redirectURL: null,
      acceptedAssets: ['btc', 'usdt'],
      isMerchantPaysFee: false,
      assets: expect.arrayContaining([{ asset: 'btc', isAllowed: true }, { asset: 'eth', isAllowed: false }]),
      mode: 'test',
    });

    const changed = await patch(server, m.publicToken, { name: '  Acme Coffee ', redirectURL: 'https://acme.example/thanks' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Acme Coffee', logoUrl: 'https://acme.example/logo.png', redirectURL: 'https://acme.example/thanks', acceptedAssets: ['btc', 'usdt'], isMerchantPaysFee: false });
    expect((await server.request('GET', PATH, { token: m.publicToken })).body).toEqual(changed.body);

    // The live side of the same account sees the same store; its `assets` are live mode's (no node: nothing offered).
    const live = await server.request('GET', PATH, { token: m.live.publicToken });
    expect(live.body).toMatchObject({ name: 'Acme Coffee', redirectURL: 'https://acme.example/thanks', acceptedAssets: ['btc', 'usdt'], mode: 'live' });
    expect(live.body.assets.every((a: { isAllowed: boolean }) => !a.isAllowed)).toBe(true);
    // A change from live mode is seen from test mode.
    expect((await patch(server, m.live.publicToken, { isMerchantPaysFee: true })).body.isMerchantPaysFee).toBe(true);
    expect((await server.request('GET', PATH, { token: m.publicToken })).body.isMerchantPaysFee).toBe(true);

    // Another merchant is untouched.
    expect((await server.request('GET', PATH, { token: other.publicToken })).body).toMatchObject({ name: 'Other', redirectURL: null, isMerchantPaysFee: false });

    // null clears the logo and the redirect.
    const cleared = await patch(server, m.publicToken, { logoUrl: null, redirectURL: null });
    expect(cleared.body).toMatchObject({ logoUrl: '', redirectURL: null, name: 'Acme Coffee' });
  });

  it('refuses bad input with 422 naming each field, and changes nothing', async () => {
    const m = await server.merchant({ name: 'Strict' });
    const before = (await server.request('GET', PATH, { token: m.publicToken })).body;
    const bad = await patch(server, m.publicToken, {
      name: '   ',
      logoUrl: 'http://strict.example/logo.png',
      redirectURL: 'javascript:alert(1)',
      acceptedAssets: [],
      isMerchantPaysFee: 'yes',
    });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['acceptedAssets', 'isMerchantPaysFee', 'logoUrl', 'name', 'redirectURL']);
    for (const [json, path] of [
      [{ logoUrl: 'https://user:pw@strict.example/logo.png' }, 'logoUrl'],
      [{ logoUrl: `https://strict.example/${'a'.repeat(2100)}.png` }, 'logoUrl'],
      [{ acceptedAssets: ['btc', 'btc'] }, 'acceptedAssets'],
      [{ acceptedAssets: ['doge'] }, 'acceptedAssets.0'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: null }, 'name'],
    ] as const) {
      const res = await patch(server, m.publicToken, json);
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
    }
    expect((await server.request('GET', PATH, { token: m.publicToken })).body).toEqual(before);
  });

  it('GraphQL: storeSettings and updateStoreSettings on the same service; typed validation errors', async () => {
    const m = await server.merchant({ name: 'Graph' });
    const read = await server.graphql(`{ storeSettings ${STORE_FIELDS} }`, {}, m.publicToken);
    expect(read.body.data.storeSettings).toMatchObject({ name: 'Graph', logoUrl: '', redirectURL: null, isMerchantPaysFee: false, mode: 'TEST' });
    const changed = await server.graphql(UPDATE, { i: { name: 'Graph Shop', logoUrl: 'https://graph.example/l.svg', acceptedAssets: ['ETH', 'USDT'] } }, m.publicToken);
    expect(changed.body.data.updateStoreSettings, changed.text).toMatchObject({
      __typename: 'UpdateStoreSettingsSuccess',
      storeSettings: { name: 'Graph Shop', logoUrl: 'https://graph.example/l.svg', acceptedAssets: ['ETH', 'USDT'], redirectURL: null },
    });
    expect((await server.request('GET', PATH, { token: m.publicToken })).body).toMatchObject({ name: 'Graph Shop', acceptedAssets: ['eth', 'usdt'] });
    const bad = await server.graphql(UPDATE, { i: { logoUrl: 'ftp://graph.example/l.svg' } }, m.publicToken);
    expect(bad.body.data.updateStoreSettings).toEqual({ __typename: 'ValidationError', code: 'VALIDATION_FAILED', details: [{ path: 'logoUrl', message: 'must be an absolute https URL without credentials' }] });
  });

  it('reading needs settings:read, changing settings:write (403 naming the scope, REST and GraphQL)', async () => {
    const m = await server.merchant({ name: 'Scoped' });
    const reader = await makeKey(server, m.publicToken, ['settings:read']);
    const invoicesOnly = await makeKey(server, m.publicToken, ['invoices:write']);
    expect((await server.request('GET', PATH, { token: reader.token })).status).toBe(200);
    const refusedRead = await server.request('GET', PATH, { token: invoicesOnly.token });
    expect(refusedRead.status).toBe(403);
    expect(refusedRead.body.error.message).toContain('settings:read');
    const refusedWrite = await patch(server, reader.token, { name: 'Hijacked' });
    expect(refusedWrite.status).toBe(403);
    expect(refusedWrite.body.error.message).toContain('settings:write');
    const gql = await server.graphql(UPDATE, { i: { name: 'Hijacked' } }, reader.token);
    expect(gql.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('settings:write'), extensions: { code: 'FORBIDDEN' } });
    expect((await server.request('GET', PATH, { token: m.publicToken })).body.name).toBe('Scoped');
    expect((await server.request('GET', PATH)).status).toBe(401);
  });

  it('each change is in the audit log of both modes, with the key, the fields from and to, and the mode it came from', async () => {
    const m = await server.merchant({ name: 'Audited', acceptedAssets: ['btc'] });
    const key = await makeKey(server, m.publicToken, ['settings:write', 'settings:read']);
    expect((await patch(server, key.token, { name: 'Audited Shop', acceptedAssets: ['usdt', 'btc'], isMerchantPaysFee: false })).status).toBe(200);
    // Nothing changed: no entry.
    expect((await patch(server, key.token, { name: 'Audited Shop' })).status).toBe(200);
    const entries = (token: string) => server.request('GET', '/api/company/audit-log', { token }).then((r) => r.body.entries.filter((e: { action: string }) => e.action === 'store_settings.changed'));
    const test = await entries(m.publicToken);
    expect(test).toEqual([
      expect.objectContaining({
        credential: 'api-key',
        apiKey: { id: key.id, name: key.name },
        clientAddress: expect.any(String),
        details: { mode: 'test', changes: { name: { from: 'Audited', to: 'Audited Shop' }, acceptedAssets: { from: ['btc'], to: ['btc', 'usdt'] } } },
      }),
    ]);
    const live = await entries(m.live.publicToken);
    expect(live).toEqual([expect.objectContaining({ details: test[0].details })]);
    const gql = await server.graphql('{ auditLog(first: 5) { nodes { action } } }', {}, m.publicToken);
    expect(gql.body.data?.auditLog.nodes.map((n: { action: string }) => n.action), gql.text).toContain('STORE_SETTINGS_CHANGED');
  });

  it('the default redirectURL and isMerchantPaysFee apply to new invoices at once (an invoice that says keeps its own)', async () => {
    const m = await server.merchant({ name: 'Defaults' });
    // The token's lookup is cached: the change must still reach the very next invoice.
    expect((await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() })).body.invoiceContent.isMerchantPaysFee).toBe(false);
    expect((await patch(server, m.publicToken, { redirectURL: 'https://defaults.example/done', isMerchantPaysFee: true })).status).toBe(200);
    const plain = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
    expect(plain.body.invoiceContent).toMatchObject({ isMerchantPaysFee: true, redirectURL: null });
    const own = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice({ isMerchantPaysFee: false, redirectURL: 'https://own.example/x' }) });
    expect(own.body.invoiceContent).toMatchObject({ isMerchantPaysFee: false, redirectURL: 'https://own.example/x' });
    const filled = await server.request('POST', `/api/invoices/v1/regular/${plain.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    expect(filled.status, filled.text).toBe(200);
    expect(filled.body.redirectURL).toBe('https://defaults.example/done');
    // The merchant pays the fee: the client sends the converted total only.
    expect(filled.body.paymentDetails.amount).toBe('7.75');
    const gql = await server.graphql('mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { ... on CreateInvoiceSuccess { invoice { content { isMerchantPaysFee } } } } }', { i: { invoiceCurrency: 'USD', items: [{ name: 'Tea', price: '2' }] } }, m.publicToken);
    expect(gql.body.data.createInvoice.invoice.content.isMerchantPaysFee, gql.text).toBe(true);
  });

  it('accepted assets: proceed refuses an asset no longer accepted, company.assets and paymentCurrencies follow', async () => {
    const m = await server.merchant({ name: 'Picky' });
    const invoice = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
    expect((await patch(server, m.publicToken, { acceptedAssets: ['btc'] })).status).toBe(200);
    const refused = await server.request('POST', `/api/invoices/v1/regular/${invoice.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.error.details[0].path).toBe('paymentCurrency');
    const read = await server.request('GET', `/api/invoices/v1/regular/${invoice.body.id}`);
    expect(read.body.company.assets.filter((a: { isAllowed: boolean }) => a.isAllowed)).toEqual([{ asset: 'btc', isAllowed: true }]);
    const gql = await server.graphql('query($id: ID!) { invoice(id: $id) { paymentCurrencies } }', { id: invoice.body.id });
    expect(gql.body.data.invoice.paymentCurrencies).toEqual(['BTC']);
    // Creating an invoice fixed to an asset no longer accepted is refused too.
    const fixed = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice({ paymentCurrency: 'trc20usdt' }) });
    expect(fixed.status).toBe(422);
    const paid = await server.request('POST', `/api/invoices/v1/regular/${invoice.body.id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'btc' } });
    expect(paid.status, paid.text).toBe(200);
  });
});
