// The merchant's e-mails and the notification settings (REST and GraphQL): payment received, short payment, withdrawal
// done or rejected, deposit frozen, webhook endpoint failing; turning kinds off stops them; each mode its own settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { fund } from '../support/funding.ts';
import { freePort } from '../support/net.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { emailsOf, FAST_EMAIL_ENV, proceeded, until } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const DENIED = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now()}@example.com`;

const allEmails = async (server: TestServer, m: TestMerchant) =>
  (await server.request('GET', '/api/company/emails?limit=100', { token: m.publicToken })).body.emails as Record<string, any>[];

const settingsOf = (server: TestServer, token: string) => server.request('GET', '/api/company/settings/notifications', { token });
const putSettings = (server: TestServer, token: string, json: unknown) => server.request('PUT', '/api/company/settings/notifications', { token, json });

const DEFAULTS = {
  client: { pending: true, done: true, wrong: true, refunded: true, closed: true },
  merchant: { emails: [], done: true, wrong: true, withdrawalDone: true, withdrawalRejected: true, depositFrozen: true, webhookFailing: true },
};

const SETTINGS_FIELDS = 'client { pending done wrong refunded closed } merchant { emails done wrong withdrawalDone withdrawalRejected depositFrozen webhookFailing }';

describe.each(DATABASES)('merchant e-mails and settings on %s', (kind) => {
  let smtp: TestSmtp;
  const env: Record<string, string> = {
    ...FAST_EMAIL_ENV,
    RISK_DENY_LIST: DENIED,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_POLL_MS: '100',
    WITHDRAWAL_SEND_INTERVAL_MS: '200',
    EMAIL_WEBHOOK_FAILING_AFTER_MS: '1000',
  };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env);

  it('settings: defaults, partial changes, validation, per mode, and GraphQL on the same service', async () => {
    const m = await server.merchant();
    expect((await settingsOf(server, m.publicToken)).body).toEqual(DEFAULTS);
    expect((await server.request('GET', '/api/company/settings/notifications')).status).toBe(401);

    const changed = await putSettings(server, m.publicToken, { client: { pending: false }, merchant: { emails: ['Ops@Shop.example', 'ops@shop.example', 'boss@shop.example'] } });
    expect(changed.status).toBe(200);
    const expected = { client: { ...DEFAULTS.client, pending: false }, merchant: { ...DEFAULTS.merchant, emails: ['ops@shop.example', 'boss@shop.example'] } };
    expect(changed.body).toEqual(expected);
    // What a body leaves out stays.
    expect((await putSettings(server, m.publicToken, { merchant: { webhookFailing: false } })).body).toEqual({ ...expected, merchant: { ...expected.merchant, webhookFailing: false } });
    expect((await putSettings(server, m.publicToken, { merchant: { webhookFailing: true } })).body).toEqual(expected);

    for (const bad of [
      { merchant: { emails: ['not an address'] } },
      { merchant: { emails: ['a@b.co\r\nBcc: x@y.co'] } },
      { merchant: { emails: Array.from({ length: 6 }, (_, i) => `a${i}@b.co`) } },
      { client: { done: 'yes' } },
    ]) {
      const res = await putSettings(server, m.publicToken, bad);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    expect((await settingsOf(server, m.publicToken)).body).toEqual(expected);

    // The live mode of the same account has settings of its own.
    const live = await server.liveMerchant();
    expect((await settingsOf(server, live.publicToken)).body).toEqual(DEFAULTS);

    const gql = await server.graphql(`{ notificationSettings { ${SETTINGS_FIELDS} } }`, {}, m.publicToken);
    expect(gql.body.data.notificationSettings).toEqual(expected);
    const mutation = `mutation($input: SetNotificationSettingsInput!) { setNotificationSettings(input: $input) { __typename
      ... on SetNotificationSettingsSuccess { notificationSettings { ${SETTINGS_FIELDS} } } ... on ValidationError { code details { path message } } } }`;
    const set = await server.graphql(mutation, { input: { client: { pending: true, closed: false }, merchant: { emails: ['gql@shop.example'] } } }, m.publicToken);
    expect(set.body.data.setNotificationSettings.notificationSettings).toEqual({
      client: { ...DEFAULTS.client, closed: false },
      merchant: { ...DEFAULTS.merchant, emails: ['gql@shop.example'] },
    });
    const refused = await server.graphql(mutation, { input: { merchant: { emails: ['nope'] } } }, m.publicToken);
    expect(refused.body.data.setNotificationSettings).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION_FAILED' });
    expect((await settingsOf(server, m.publicToken)).body.merchant.emails).toEqual(['gql@shop.example']);
  });

  it('turning a client kind off stops it; the others still go', async () => {
    const m = await server.merchant();
    await putSettings(server, m.publicToken, { client: { pending: false } });
    const to = unique('off');
    const invoice = await proceeded(server, m, to);
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: invoice.id, amount: '101', confirmations: 19 } });
    const [receipt] = await smtp.waitFor(1, to);
    expect(receipt!.parsed.subject).toContain('Receipt');
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.arrived.filter((x) => x.to.includes(to))).toHaveLength(1);
    expect((await emailsOf(server, m, invoice.id)).map((e) => e.kind)).toEqual(['client.done']);
    // The same log over GraphQL, and only the caller's.
    const query = 'query($id: ID!) { emailDeliveries(filter: {invoiceId: $id}) { totalCount nodes { id kind recipient lang status attempts invoiceId } } }';
    const gql = await server.graphql(query, { id: invoice.id }, m.publicToken);
    expect(gql.body.data.emailDeliveries).toEqual({
      totalCount: 1,
      nodes: [{ id: expect.any(String), kind: 'client.done', recipient: to, lang: 'EN', status: 'SENT', attempts: 1, invoiceId: invoice.id }],
    });
    const stranger = await server.merchant();
    expect((await server.graphql(query, { id: invoice.id }, stranger.publicToken)).body.data.emailDeliveries.totalCount).toBe(0);
    expect((await server.request('GET', `/api/company/emails?invoiceId=${invoice.id}`, { token: stranger.publicToken })).body.emails).toEqual([]);
  });

  it('payment received and short payment go to every merchant address; a kind turned off does not', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const ops = unique('ops');
    const boss = unique('boss');
    await putSettings(server, m.publicToken, { merchant: { emails: [ops, boss] } });
    const paid = await proceeded(server, m, unique('client'));
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: paid.id, amount: '101', confirmations: 19 } });
    for (const to of [ops, boss]) {
      const [mail] = await smtp.waitFor(1, to);
      expect(mail!.parsed.subject).toBe(`[TEST] Payment received: invoice ${paid.id}`);
      expect(mail!.parsed.text).toContain('Paid: 101 USDT (tron)');
      expect(mail!.parsed.text).toContain(`https://checkout.example/pay/${paid.id}`);
    }
    const short = await proceeded(server, m, unique('client'));
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: short.id, amount: '60', confirmations: 19 } });
    const [, wrong] = await smtp.waitFor(2, ops);
    expect(wrong!.parsed.subject).toBe(`[TEST] Short payment waiting for your decision: invoice ${short.id}`);
    expect(wrong!.parsed.text).toContain('Arrived: 60 USDT (tron)');
    expect(wrong!.parsed.text).toContain('Expected: 101 USDT (tron)');

    await putSettings(server, m.publicToken, { merchant: { wrong: false } });
    const again = await proceeded(server, m, unique('client'));
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: again.id, amount: '60', confirmations: 19 } });
    await until('the client e-mails', () => emailsOf(server, m, again.id), (e) => e.filter((x) => x.status === 'sent').length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect((await emailsOf(server, m, again.id)).map((e) => e.kind).sort()).toEqual(['client.pending', 'client.wrong']);
    expect(smtp.arrived.filter((x) => x.to.includes(ops))).toHaveLength(2);
  });

  it('withdrawal done and rejected', async () => {
    const m = await server.merchant();
    const ops = unique('ops-wd');
    await putSettings(server, m.publicToken, { merchant: { emails: [ops] } });
    await fund(server, m.publicToken, 'trc20usdt', '100');
    const ok = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }] } });
    const uid = ok.body[0].uid as string;
    const sent = await until('sent on chain', () => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }), (r) => r.body.txHash !== null);
    expect((await server.request('POST', `/api/sandbox/withdrawals/${uid}/confirm`, { token: m.publicToken })).status).toBe(200);
    const done = (await smtp.waitFor(2, ops)).find((x) => x.parsed.subject?.includes('Withdrawal done'))!;
    expect(done.parsed.subject).toBe('[TEST] Withdrawal done: 10 trc20usdt');
    expect(done.parsed.text).toContain(`Withdrawal: ${uid}`);
    expect(done.parsed.text).toContain(`To address: ${TRON}`);
    expect(done.parsed.text).toContain(`Transaction: ${sent.body.txHash}`);

    const denied = await server.request('POST', '/api/transactions/withdraw', { token: m.publicToken, json: { items: [{ amount: '10', tag: '', to: DENIED, asset: 'trc20usdt' }] } });
    const deniedUid = denied.body[0].uid as string;
    const mails = await until('the rejection', async () => smtp.arrived.filter((x) => x.to.includes(ops) && x.parsed.subject?.includes('rejected')), (x) => x.length === 1);
    expect(mails[0]!.parsed.subject).toBe('[TEST] Withdrawal rejected: 10 trc20usdt');
    expect(mails[0]!.parsed.text).toContain(`Withdrawal: ${deniedUid}`);
    expect((await allEmails(server, m)).filter((e) => e.kind.startsWith('merchant.withdrawal')).map((e) => e.kind).sort()).toEqual([
      'merchant.withdrawal_done',
      'merchant.withdrawal_rejected',
    ]);
  });

  it('deposit frozen', async () => {
    const m = await server.merchant();
    const ops = unique('ops-dep');
    await putSettings(server, m.publicToken, { merchant: { emails: [ops] } });
    const address = (await server.request('POST', '/api/static-addresses', { token: m.publicToken, json: { asset: 'trc20usdt', internalUserId: 'player-7' } })).body;
    const held = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { address: address.address, amount: '20', from: DENIED, confirmations: 19 } });
    expect(held.body.state).toBe('frozen');
    const [mail] = await smtp.waitFor(1, ops);
    expect(mail!.parsed.subject).toBe('[TEST] Deposit frozen: 20 usdt');
    expect(mail!.parsed.text).toContain(`Address: ${address.address}`);
    expect(mail!.parsed.text).toContain(`Transaction: ${held.body.txHash}`);
  });

  it.each(['test', 'live'] as const)('webhook endpoint failing for a while, %s mode: one e-mail per failing stretch', async (mode) => {
    const m = mode === 'test' ? await server.merchant() : await server.liveMerchant();
    const ops = unique(`ops-hook-${mode}`);
    await putSettings(server, m.publicToken, { merchant: { emails: [ops] } });
    const dead = `http://127.0.0.1:${await freePort()}/hooks`;
    expect((await server.request('PUT', '/api/company/settings/webhook-url', { token: m.publicToken, json: { webHookUrl: dead } })).status).toBe(200);
    await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
    const [mail] = await smtp.waitFor(1, ops, 20_000);
    // A live tenant's e-mails carry no test mark.
    expect(mail!.parsed.subject).toBe(`${mode === 'test' ? '[TEST] ' : ''}Your webhook endpoint has been failing for over an hour`);
    expect(mail!.parsed.text).toContain(`Endpoint: ${dead}`);
    expect(mail!.parsed.text?.includes('Test mode')).toBe(mode === 'test');
    // Still failing: no second e-mail for the same stretch.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(smtp.arrived.filter((x) => x.to.includes(ops))).toHaveLength(1);
    expect((await allEmails(server, m)).map((e) => e.kind)).toEqual(['merchant.webhook_failing']);
    // Not in the merchant's events feed: an internal event.
    const feed = await server.request('GET', '/api/company/events', { token: m.publicToken });
    expect(feed.body.events.map((e: { type: string }) => e.type)).not.toContain('webhook.failing');
  });
});
