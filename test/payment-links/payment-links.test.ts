// Payment links through the real server (docs/payment-links.md): made, listed, read and deactivated over REST and
// GraphQL, items checked exactly as an invoice's; isolation between merchants and modes; opening GET /l/<id> makes a
// new invoice of the link's content (with its invoice.created event) and answers 303 to its checkout page, the invoice
// naming its link; unknown and inactive links get a friendly page (en/de, the pages' headers); openings per client
// address are limited (429 with Retry-After).
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { makeKey } from '../keys/support.ts';

const LINK = {
  name: 'Beans',
  invoiceCurrency: 'eur',
  items: [
    { name: 'Coffee beans 1 kg', price: 24.9 },
    { name: 'Grinder', price: '10.005' },
  ],
  active: true,
};

const create = (server: TestServer, token: string, json: unknown = LINK) => server.request('POST', '/api/payment-links', { token, json });

/** GET /l/<id> without following the redirect. */
const open = (server: TestServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { redirect: 'manual', headers, signal: AbortSignal.timeout(15_000) });

const LINK_FIELDS = 'id linkId url name mode invoiceCurrency items { name price } total { amount currency } paymentCurrency redirectURL isMerchantPaysFee active createdAt deactivatedAt';

describe.each(DATABASES)('payment links on %s', { timeout: 120_000 }, (kind) => {
  // Behind one trusted proxy: X-Forwarded-For names the client (without it, the peer is the client).
  const server = useServer(kind, { PUBLIC_BASE_URL: 'https://pay.shop.example', PAYMENT_LINK_OPENS_PER_ADDRESS: '4', PAYMENT_LINK_OPEN_WINDOW_SECONDS: '600', TRUST_PROXY_HOPS: '1' });

  it('POST makes a link with its url; GET reads it; the list pages newest first; deactivate is for good', async () => {
    const m = await server.merchant();
    const made = await create(server, m.publicToken);
    expect(made.status, made.text).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^pl_[1-9A-HJ-NP-Za-km-z]{16,24}$/),
      url: `https://pay.shop.example/l/${made.body.id}`,
      name: 'Beans',
      invoiceCurrency: 'eur',
      items: [
        { name: 'Coffee beans 1 kg', price: '24.90' },
        { name: 'Grinder', price: '10.01' },
      ],
      total: '34.91',
      paymentCurrency: null,
      redirectURL: null,
      isMerchantPaysFee: null,
      active: true,
      mode: 'test',
      createdAt: expect.stringMatching(/Z$/),
      deactivatedAt: null,
    });
    expect((await server.request('GET', `/api/payment-links/${made.body.id}`, { token: m.publicToken })).body).toEqual(made.body);

    const ids = [made.body.id];
    for (let i = 0; i < 4; i++) ids.unshift((await create(server, m.publicToken, { ...LINK, name: `Link ${i}`, paymentCurrency: 'btc', isMerchantPaysFee: true })).body.id);
    const seen: string[] = [];
    for (let after: string | null = null; ; ) {
      const page = await server.request('GET', `/api/payment-links?limit=2${after ? `&after=${after}` : ''}`, { token: m.publicToken });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.paymentLinks.map((l: { id: string }) => l.id));
      after = page.body.nextCursor;
      if (!after) break;
    }
    expect(seen).toEqual(ids);

    const off = await server.request('POST', `/api/payment-links/${ids[0]}/deactivate`, { token: m.publicToken });
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ active: false, deactivatedAt: expect.stringMatching(/Z$/), paymentCurrency: 'btc', isMerchantPaysFee: true });
    // Again: the same answer, nothing changes.
    expect((await server.request('POST', `/api/payment-links/${ids[0]}/deactivate`, { token: m.publicToken })).body).toEqual(off.body);
    expect((await server.request('GET', '/api/payment-links?active=false', { token: m.publicToken })).body.paymentLinks.map((l: { id: string }) => l.id)).toEqual([ids[0]]);
    expect((await server.request('GET', '/api/payment-links?active=true', { token: m.publicToken })).body.paymentLinks).toHaveLength(4);
  });

  it('items and the rest are checked exactly as an invoice create checks them (422 naming each field)', async () => {
    const m = await server.merchant({ acceptedAssets: ['btc'] });
    const bad = await create(server, m.publicToken, { name: '', invoiceCurrency: 'xyz', items: [{ name: 'a', price: true }], redirectURL: 'https://u:p@x.example/', active: 'yes' });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['active', 'invoiceCurrency', 'items.0.price', 'name', 'redirectURL']);
    const invoiceBad = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'xyz', items: [{ name: 'a', price: true }], redirectURL: 'https://u:p@x.example/' } });
    // The same messages as the invoice create for the same fields.
    const messages = (res: { body: any }) => Object.fromEntries(res.body.error.details.map((d: { path: string; message: string }) => [d.path, d.message]));
    expect(messages(bad)).toMatchObject(messages(invoiceBad));
    for (const [json, path] of [
      [{ ...LINK, items: [] }, 'items'],
      [{ ...LINK, items: [{ name: 'free', price: 0 }] }, 'items'],
      [{ ...LINK, items: Array.from({ length: 501 }, () => ({ name: 'x', price: 1 })) }, 'items'],
      [{ ...LINK, items: [{ name: 'x\u0000', price: 1 }] }, null],
      [{ ...LINK, items: [{ name: 'big', price: '1e400' }] }, 'items.0.price'],
      [{ ...LINK, name: 'n'.repeat(201) }, 'name'],
      [{ ...LINK, paymentCurrency: 'trc20usdt' }, 'paymentCurrency'],
    ] as const) {
      const res = await create(server, m.publicToken, json);
      expect(res.status, JSON.stringify(json).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      if (path) expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
    }
    expect((await server.request('GET', '/api/payment-links', { token: m.publicToken })).body.paymentLinks).toEqual([]);
  });

  it('a link is its mode’s and its merchant’s: others get 404 and see none in their list', async () => {
    const a = await server.merchant();
    const b = await server.merchant();
    const link = (await create(server, a.publicToken)).body;
    for (const token of [b.publicToken, a.live.publicToken]) {
      expect((await server.request('GET', `/api/payment-links/${link.id}`, { token })).status).toBe(404);
      expect((await server.request('POST', `/api/payment-links/${link.id}/deactivate`, { token })).status).toBe(404);
      expect((await server.request('GET', '/api/payment-links', { token })).body.paymentLinks).toEqual([]);
      expect((await server.graphql('query($id: ID!) { paymentLink(id: $id) { id } }', { id: link.id }, token)).body.data.paymentLink).toBeNull();
    }
    expect((await server.request('GET', `/api/payment-links/${link.id}`, { token: a.publicToken })).body.active).toBe(true);
    expect((await server.request('GET', '/api/payment-links/pl_nope', { token: a.publicToken })).status).toBe(404);
    // Scopes: reading needs invoices:read, making and deactivating invoices:write.
    const reader = await makeKey(server, a.publicToken, ['invoices:read']);
    expect((await server.request('GET', `/api/payment-links/${link.id}`, { token: reader.token })).status).toBe(200);
    const refused = await create(server, reader.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('invoices:write');
    expect((await server.request('POST', `/api/payment-links/${link.id}/deactivate`, { token: reader.token })).status).toBe(403);
  });

  it('a live-mode link makes live invoices only', async () => {
    const m = await server.liveMerchant();
    const made = await create(server, m.publicToken);
    expect(made.status, made.text).toBe(201);
    expect(made.body.mode).toBe('live');
    const res = await open(server, `/l/${made.body.id}`, { 'x-forwarded-for': '198.51.100.1' });
    expect(res.status).toBe(303);
    const invoiceId = res.headers.get('location')!.split('/').at(-1)!;
    const invoice = await server.request('GET', `/api/invoices/v1/regular/${invoiceId}`, { token: m.publicToken });
    expect(invoice.body).toMatchObject({ mode: 'live', paymentLinkId: made.body.id });
  });

  it('GET /l/<id> makes a new invoice of the link’s content through the create service and answers 303 to its checkout page', async () => {
    const m = await server.merchant({ name: 'Link Shop', redirectUrl: 'https://shop.example/default' });
    const link = (await create(server, m.publicToken)).body;
    const hooks = await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: 'https://hooks.example/in' } });
    expect(hooks.status, hooks.text).toBe(200);
    const first = await open(server, `/l/${link.id}`);
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(/^https:\/\/checkout\.example\/pay\/[1-9A-HJ-NP-Za-km-z]{16,24}$/);
    expect(first.headers.get('content-security-policy')).toContain("default-src 'none'");
    const second = await open(server, `/l/${link.id}`);
    expect(second.headers.get('location')).not.toBe(location);

    const invoiceId = location.split('/').at(-1)!;
    const invoice = await server.request('GET', `/api/invoices/v1/regular/${invoiceId}`, { token: m.publicToken });
    expect(invoice.status, invoice.text).toBe(200);
    expect(invoice.body).toMatchObject({
      status: 'created',
      company: { name: 'Link Shop' },
      invoiceContent: { invoiceCurrency: 'eur', items: link.items, paymentCurrency: null, isMerchantPaysFee: false, redirectURL: null },
      mode: 'test',
      paymentLinkId: link.id,
    });
    // Its event and webhook, as for an invoice made through the API.
    const events = await server.request('GET', '/api/company/events?limit=10', { token: m.publicToken });
    expect(events.status, events.text).toBe(200);
    expect(JSON.stringify(events.body)).toContain(invoiceId);
    const deliveries = await server.request('GET', '/api/company/webhooks/deliveries?limit=10', { token: m.publicToken });
    expect(deliveries.status, deliveries.text).toBe(200);
    expect(JSON.stringify(deliveries.body)).toContain(invoiceId);
    // The store's default redirect is the invoice's, taken when the link was opened.
    const filled = await server.request('POST', `/api/invoices/v1/regular/${invoiceId}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: 'trc20usdt' } });
    expect(filled.body.redirectURL).toBe('https://shop.example/default');

    const gql = await server.graphql(`query($id: ID!) { invoice(id: $id) { paymentLinkId paymentLink { linkId name } } }`, { id: invoiceId }, m.publicToken);
    expect(gql.body.data.invoice, gql.text).toEqual({ paymentLinkId: link.id, paymentLink: { linkId: link.id, name: 'Beans' } });
    // The public read shows the id but not the link itself.
    expect((await server.graphql(`query($id: ID!) { invoice(id: $id) { paymentLinkId paymentLink { name } } }`, { id: invoiceId })).body.data.invoice).toEqual({ paymentLinkId: link.id, paymentLink: null });
    const linkInvoices = await server.graphql(`query($id: ID!) { paymentLink(id: $id) { invoices(first: 5) { totalCount nodes { id } } } }`, { id: link.id }, m.publicToken);
    expect(linkInvoices.body.data.paymentLink.invoices.totalCount, linkInvoices.text).toBe(2);
    // HEAD makes nothing.
    expect((await fetch(`${server.url}/l/${link.id}`, { method: 'HEAD', redirect: 'manual' })).status).toBe(200);
    expect(await server.app.db.prisma.invoice.count({ where: { paymentLinkId: link.id } })).toBe(2);
  });

  it('unknown and inactive links get a friendly page (404, 410) in the client’s language with the pages’ headers, and make nothing', async () => {
    const m = await server.merchant();
    const link = (await create(server, m.publicToken, { ...LINK, active: false })).body;
    expect(link).toMatchObject({ active: false, deactivatedAt: expect.any(String) });
    const inactive = await open(server, `/l/${link.id}`);
    expect(inactive.status).toBe(410);
    expect(inactive.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(inactive.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(inactive.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await inactive.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('This payment link is no longer active');
    expect(html).not.toContain('<script');
    const german = await open(server, `/l/${link.id}`, { 'accept-language': 'de-DE,de;q=0.9' });
    expect(await german.text()).toContain('Dieser Zahlungslink ist nicht mehr aktiv');
    const unknown = await open(server, '/l/pl_1111111111111111111111?lang=de');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Zahlungslink nicht gefunden');
    for (const path of ['/l/%00', '/l/..%2f..%2fetc', `/l/${'x'.repeat(3000)}`]) expect((await open(server, path)).status).toBe(404);
    expect((await fetch(`${server.url}/l/${link.id}`, { method: 'POST', redirect: 'manual' })).status).toBe(405);
    expect(await server.app.db.prisma.invoice.count({ where: { companyId: m.tenantId } })).toBe(0);
  });

  it('a link whose fixed currency the store no longer accepts gets a 409 page and makes nothing, until the store accepts it again', async () => {
    const m = await server.merchant();
    const link = (await create(server, m.publicToken, { ...LINK, paymentCurrency: 'btc' })).body;
    expect((await server.request('PATCH', '/api/company/settings/store', { token: m.publicToken, json: { acceptedAssets: ['usdt'] } })).status).toBe(200);
    const refused = await open(server, `/l/${link.id}`);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('This payment link cannot be used right now');
    expect(await server.app.db.prisma.invoice.count({ where: { paymentLinkId: link.id } })).toBe(0);
    expect((await server.request('PATCH', '/api/company/settings/store', { token: m.publicToken, json: { acceptedAssets: ['usdt', 'btc'] } })).status).toBe(200);
    const opened = await open(server, `/l/${link.id}`);
    expect(opened.status).toBe(303);
    const invoice = await server.request('GET', `/api/invoices/v1/regular/${opened.headers.get('location')!.split('/').at(-1)}`);
    expect(invoice.body.invoiceContent.paymentCurrency).toBe('btc');
  });

  it('openings are limited per client address: 429 with Retry-After and a friendly page past the limit, other addresses go on', async () => {
    const m = await server.merchant();
    const link = (await create(server, m.publicToken)).body;
    const from = (address: string, headers: Record<string, string> = {}) => open(server, `/l/${link.id}`, { 'x-forwarded-for': address, ...headers });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await from('203.0.113.7')).status);
    expect(statuses).toEqual([303, 303, 303, 303, 429, 429]);
    const limited = await from('203.0.113.7', { 'accept-language': 'de' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    expect(limited.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await limited.text()).toContain('Zu viele Zahlungen begonnen');
    expect(await server.app.db.prisma.invoice.count({ where: { paymentLinkId: link.id } })).toBe(4);
    // Another address goes on; an IPv6 client counts per /64 (the block one client holds).
    expect((await from('203.0.113.8')).status).toBe(303);
    for (let i = 0; i < 4; i++) expect((await from(`2001:db8:1:2::${i + 1}`)).status).toBe(303);
    expect((await from('2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await from('2001:db8:1:3::1')).status).toBe(303);
    // Unknown and inactive links are still answered as such, and count nothing.
    expect((await open(server, '/l/pl_1111111111111111111111', { 'x-forwarded-for': '203.0.113.7' })).status).toBe(404);
  });

  it('GraphQL: createPaymentLink, paymentLinks, paymentLink and deactivatePaymentLink on the same service', async () => {
    const m = await server.merchant();
    const made = await server.graphql(
      `mutation($i: CreatePaymentLinkInput!) { createPaymentLink(input: $i) { __typename ... on CreatePaymentLinkSuccess { paymentLink { ${LINK_FIELDS} } } ... on ValidationError { details { path message } } } }`,
      { i: { name: 'GQL', invoiceCurrency: 'USD', items: [{ name: 'Tea', price: '2.005' }], paymentCurrency: 'BTC' } },
      m.publicToken,
    );
    const link = made.body.data.createPaymentLink.paymentLink;
    expect(link, made.text).toMatchObject({ name: 'GQL', mode: 'TEST', invoiceCurrency: 'USD', items: [{ name: 'Tea', price: '2.01' }], total: { amount: '2.01', currency: 'USD' }, paymentCurrency: 'BTC', active: true, isMerchantPaysFee: null });
    expect(link.url).toBe(`https://pay.shop.example/l/${link.linkId}`);
    const rest = await server.request('GET', `/api/payment-links/${link.linkId}`, { token: m.publicToken });
    expect(rest.body).toMatchObject({ name: 'GQL', items: [{ name: 'Tea', price: '2.01' }], paymentCurrency: 'btc' });
    const node = await server.graphql('query($id: ID!) { node(id: $id) { ... on PaymentLink { linkId } } }', { id: link.id }, m.publicToken);
    expect(node.body.data.node).toEqual({ linkId: link.linkId });
    const bad = await server.graphql(
      'mutation($i: CreatePaymentLinkInput!) { createPaymentLink(input: $i) { __typename ... on ValidationError { details { path } } } }',
      { i: { name: 'GQL', invoiceCurrency: 'USD', items: [] } },
      m.publicToken,
    );
    expect(bad.body.data.createPaymentLink).toEqual({ __typename: 'ValidationError', details: [{ path: 'items' }] });
    const list = await server.graphql('{ paymentLinks(first: 10, filter: { active: true }) { totalCount nodes { linkId } } }', {}, m.publicToken);
    expect(list.body.data.paymentLinks).toEqual({ totalCount: 1, nodes: [{ linkId: link.linkId }] });
    const off = await server.graphql('mutation($id: ID!) { deactivatePaymentLink(input: { id: $id }) { __typename ... on DeactivatePaymentLinkSuccess { paymentLink { active } } } }', { id: link.linkId }, m.publicToken);
    expect(off.body.data.deactivatePaymentLink).toEqual({ __typename: 'DeactivatePaymentLinkSuccess', paymentLink: { active: false } });
    const missing = await server.graphql('mutation { deactivatePaymentLink(input: { id: "pl_1111111111111111111111" }) { __typename } }', {}, m.publicToken);
    expect(missing.body.data.deactivatePaymentLink.__typename).toBe('NotFoundError');
  });
});
