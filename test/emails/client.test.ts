// What the paying client gets, driven through the sandbox (transfers, the test clock): each kind once, to the right
// address, in English and German, with the amount, address, tag and link; hostile values escaped; no header injection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';
import { startSmtp, type ArrivedMail, type TestSmtp } from '../support/smtp.ts';
import { emailsOf, FAST_EMAIL_ENV, until } from './support.ts';

const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const PAY_URL = 'https://checkout.example/pay';

let counter = 0;
const uniqueEmail = (name: string) => `${name}-${++counter}-${Date.now()}@example.com`;

async function invoiceFor(server: TestServer, m: TestMerchant, items: { name: string; price: number }[] = [{ name: 'Order', price: 100 }]) {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'usd', items } });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function proceed(server: TestServer, id: string, json: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { paymentCurrency: 'trc20usdt', ...json }, headers });
  expect(res.status).toBe(200);
  return res.body;
}

function sandbox(server: TestServer, token: string) {
  return {
    pay: async (json: Record<string, unknown>) => {
      const res = await server.request('POST', '/api/sandbox/transfers', { token, json });
      expect(res.status).toBe(201);
      return res.body as { id: string; txHash: string };
    },
    advance: (minutes: number) => server.request('POST', '/api/sandbox/clock/advance', { token, json: { minutes } }),
  };
}

const text = (m: ArrivedMail) => m.parsed.text ?? '';
const html = (m: ArrivedMail) => (typeof m.parsed.html === 'string' ? m.parsed.html : '');
const ofKind = async (smtp: TestSmtp, to: string, count: number) => smtp.waitFor(count, to);

describe.each(DATABASES)('client e-mails on %s', (kind) => {
  let smtp: TestSmtp;
  const env: Record<string, string> = { ...FAST_EMAIL_ENV, PAY_URL };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env);

  it('pending, in English: amount, currency, address, deadline, items, total and the PAY_URL link', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const to = uniqueEmail('pending-en');
    const id = await invoiceFor(server, m, [
      { name: 'Espresso', price: 60 },
      { name: 'Croissant', price: 40 },
    ]);
    const invoice = await proceed(server, id, { clientEmail: to });
    const [mail] = await ofKind(smtp, to, 1);
    expect(mail!.parsed.subject).toBe('[TEST] Your payment to Acme Coffee');
    const body = text(mail!);
    expect(body).toContain(`Amount to send: ${invoice.paymentDetails.amount} USDT (tron)`);
    expect(body).toContain(`Address: ${invoice.address.address}`);
    expect(body).toContain(`Pay before: ${invoice.expiredAt.slice(0, 16).replace('T', ' ')} UTC`);
    expect(body).toContain('Espresso  60 USD');
    expect(body).toContain('Total: 100 USD');
    expect(body).toContain(`Open the invoice: ${PAY_URL}/${id}`);
    expect(body).toContain('Test mode: no real money was moved.');
    expect(body).not.toContain('Tag');
    expect(html(mail!)).toContain(`href="${PAY_URL}/${id}"`);
    expect(html(mail!)).toContain(`<code>${invoice.address.address}</code>`);
    expect(mail!.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect((await emailsOf(server, m, id)).map((e) => [e.kind, e.lang])).toEqual([['client.pending', 'en']]);
  });

  it('pending, in German from the page (lang) and from Accept-Language; TON with its tag marked as required', async () => {
    const m = await server.merchant({ name: 'Bäckerei Müller' });
    const fromPage = uniqueEmail('pending-de');
    const idPage = await invoiceFor(server, m);
    const ton = await proceed(server, idPage, { clientEmail: fromPage, paymentCurrency: 'ton', lang: 'de' }, { 'accept-language': 'en' });
    const [mail] = await ofKind(smtp, fromPage, 1);
    expect(mail!.parsed.subject).toBe('[TEST] Ihre Zahlung an Bäckerei Müller');
    expect(text(mail!)).toContain(`Zu sendender Betrag: ${ton.paymentDetails.amount} TON (ton)`);
    expect(text(mail!)).toContain(`Adresse: ${ton.address.address}`);
    expect(ton.address.tag).toMatch(/^\d+$/);
    expect(text(mail!)).toContain(`Tag (erforderlich: mit der Zahlung senden, sonst kann sie nicht zugeordnet werden): ${ton.address.tag}`);
    expect(text(mail!)).toContain(`Rechnung öffnen: ${PAY_URL}/${idPage}`);

    const fromHeader = uniqueEmail('pending-accept');
    const idHeader = await invoiceFor(server, m);
    await proceed(server, idHeader, { clientEmail: fromHeader }, { 'accept-language': 'fr;q=0.9, de-AT;q=0.8, en;q=0.5' });
    const [german] = await ofKind(smtp, fromHeader, 1);
    expect(german!.parsed.subject).toContain('Ihre Zahlung an');
    expect((await emailsOf(server, m, idHeader))[0]!.lang).toBe('de');
    // The stored language is on the invoice.
    expect((await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id: idHeader } })).lang).toBe('de');
  });

  it('GraphQL proceed: lang from the input, else from Accept-Language', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const mutation = `mutation($input: ProceedInvoiceInput!) { proceedInvoice(input: $input) { __typename } }`;
    const byInput = await invoiceFor(server, m);
    const a = await server.request('POST', '/graphql', {
      json: { query: mutation, variables: { input: { invoiceId: byInput, clientEmail: uniqueEmail('gql-de'), paymentCurrency: 'TRC20USDT', lang: 'DE' } } },
      headers: { 'accept-language': 'en' },
    });
    expect(a.body.data.proceedInvoice.__typename).toBe('ProceedInvoiceSuccess');
    const byHeader = await invoiceFor(server, m);
    await server.request('POST', '/graphql', {
      json: { query: mutation, variables: { input: { invoiceId: byHeader, clientEmail: uniqueEmail('gql-header'), paymentCurrency: 'TRC20USDT' } } },
      headers: { 'accept-language': 'de-CH, en;q=0.5' },
    });
    const neither = await invoiceFor(server, m);
    await server.request('POST', '/graphql', { json: { query: mutation, variables: { input: { invoiceId: neither, clientEmail: uniqueEmail('gql-none'), paymentCurrency: 'TRC20USDT' } } } });
    const langs = await Promise.all([byInput, byHeader, neither].map(async (id) => (await server.app.db.prisma.invoice.findUniqueOrThrow({ where: { id } })).lang));
    expect(langs).toEqual(['de', 'de', null]);
    const records = await until('recorded', async () => Promise.all([byInput, byHeader, neither].map((id) => emailsOf(server, m, id))), (r) => r.every((e) => e.length === 1));
    expect(records.map((r) => r[0]!.lang)).toEqual(['de', 'de', 'en']);
  });

  it('done: a receipt with what was paid, when, the transaction hash and the merchant; in German too', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const s = sandbox(server, m.publicToken);
    for (const lang of ['en', 'de'] as const) {
      const to = uniqueEmail(`done-${lang}`);
      const id = await invoiceFor(server, m);
      const invoice = await proceed(server, id, { clientEmail: to, lang });
      const t = await s.pay({ invoiceId: id, amount: invoice.paymentDetails.amount, confirmations: 19 });
      const mails = await ofKind(smtp, to, 2);
      const receipt = mails.find((x) => /Receipt|Beleg/.test(x.parsed.subject ?? ''))!;
      expect(receipt.parsed.subject).toBe(lang === 'en' ? '[TEST] Receipt: your payment to Acme Coffee' : '[TEST] Beleg: Ihre Zahlung an Acme Coffee');
      const body = text(receipt);
      expect(body).toContain(`${lang === 'en' ? 'Paid' : 'Bezahlt'}: ${invoice.paymentDetails.amount} USDT (tron)`);
      expect(body).toContain(`${lang === 'en' ? 'Transaction' : 'Transaktion'}: ${t.txHash}`);
      expect(body).toContain(`${lang === 'en' ? 'Merchant' : 'Händler'}: Acme Coffee`);
      expect(body).toMatch(lang === 'en' ? /Paid at: \d{4}-\d\d-\d\d \d\d:\d\d UTC/ : /Bezahlt am: \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      const records = await until('sent', () => emailsOf(server, m, id), (e) => e.length === 2 && e.every((x) => x.status === 'sent'));
      expect(records.map((e) => e.kind).sort()).toEqual(['client.done', 'client.pending']);
      // Once each: later confirmations of the same transfer send nothing more.
      await server.request('POST', `/api/sandbox/transfers/${t.id}/confirm`, { token: m.publicToken, json: { confirmations: 40 } });
      await new Promise((r) => setTimeout(r, 300));
      expect(smtp.arrived.filter((x) => x.to.includes(to))).toHaveLength(2);
    }
  });

  it('wrong: what arrived, what was expected and what happens next; then refunded with amount, address and hash', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const s = sandbox(server, m.publicToken);
    const to = uniqueEmail('wrong');
    const id = await invoiceFor(server, m);
    const invoice = await proceed(server, id, { clientEmail: to });
    await s.pay({ invoiceId: id, amount: '60', confirmations: 19 });
    const both = await ofKind(smtp, to, 2);
    // In event order, whether or not they were planned together.
    expect(both.map((x) => x.parsed.subject)).toEqual(['[TEST] Your payment to Acme Coffee', '[TEST] Your payment to Acme Coffee is short']);
    const wrong = both[1];
    expect(wrong!.parsed.subject).toBe('[TEST] Your payment to Acme Coffee is short');
    expect(text(wrong!)).toContain('Arrived: 60 USDT (tron)');
    expect(text(wrong!)).toContain(`Expected: ${invoice.paymentDetails.amount} USDT (tron)`);
    expect(text(wrong!)).toContain('will now either accept the payment as it is or send it back to you');

    const refund = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: m.publicToken, json: { address: TRON_ADDRESS } });
    expect(refund.status).toBe(200);
    const refunded = (await ofKind(smtp, to, 3)).find((x) => x.parsed.subject?.endsWith('sent back'));
    expect(refunded!.parsed.subject).toBe('[TEST] Your payment to Acme Coffee is being sent back');
    expect(text(refunded!)).toContain('Amount sent back: 59 USDT (tron)');
    expect(text(refunded!)).toContain(`To address: ${TRON_ADDRESS}`);
    expect(text(refunded!)).toContain(`Transaction: ${refund.body.refund.txHash}`);
    const kinds = (await until('sent', () => emailsOf(server, m, id), (e) => e.length === 3 && e.every((x) => x.status === 'sent'))).map((e) => e.kind);
    expect(kinds.sort()).toEqual(['client.pending', 'client.refunded', 'client.wrong']);
  });

  it('closed with money received late: the merchant decides; a plain expiry sends nothing', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const s = sandbox(server, m.publicToken);
    const late = uniqueEmail('late');
    const quiet = uniqueEmail('quiet');
    const lateId = await invoiceFor(server, m);
    const quietId = await invoiceFor(server, m);
    await proceed(server, lateId, { clientEmail: late, lang: 'de' });
    await proceed(server, quietId, { clientEmail: quiet });
    await ofKind(smtp, late, 1);
    await ofKind(smtp, quiet, 1);
    expect((await s.advance(31)).status).toBe(200);
    await until('closed', async () => (await server.request('GET', `/api/invoices/v1/regular/${lateId}`)).body.status, (st) => st === 'closed');
    const t = await s.pay({ invoiceId: lateId, amount: '101', confirmations: 19 });
    const closed = (await ofKind(smtp, late, 2)).find((x) => x.parsed.subject?.endsWith('Ablauf der Rechnung an'));
    expect(closed!.parsed.subject).toBe('[TEST] Ihre Zahlung an Acme Coffee kam nach Ablauf der Rechnung an');
    expect(text(closed!)).toContain('Eingegangen: 101 USDT (tron)');
    expect(text(closed!)).toContain(`Transaktion: ${t.txHash}`);
    expect(text(closed!)).toContain('Acme Coffee entscheidet');
    await new Promise((r) => setTimeout(r, 600));
    expect(smtp.arrived.filter((x) => x.to.includes(quiet))).toHaveLength(1);
    expect((await emailsOf(server, m, quietId)).map((e) => e.kind)).toEqual(['client.pending']);
  });

  it('a rolled-back refund sends nothing: the refunded event was never committed', async () => {
    const m = await server.merchant();
    const s = sandbox(server, m.publicToken);
    const to = uniqueEmail('rollback');
    const id = await invoiceFor(server, m);
    await proceed(server, id, { clientEmail: to });
    // 0.5 received does not cover the 1 USDT network fee of a refund: the transaction that moved it to refunded rolls back.
    await s.pay({ invoiceId: id, amount: '0.5', confirmations: 19 });
    await ofKind(smtp, to, 2);
    const refund = await server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: m.publicToken, json: { address: TRON_ADDRESS } });
    expect(refund.status).toBe(422);
    await new Promise((r) => setTimeout(r, 600));
    expect(smtp.arrived.filter((x) => x.to.includes(to))).toHaveLength(2);
    expect((await emailsOf(server, m, id)).map((e) => e.kind).sort()).toEqual(['client.pending', 'client.wrong']);
  });

  it('escapes a hostile item and merchant name in the HTML and keeps CR/LF out of the headers', async () => {
    const m = await server.merchant({ name: 'Evil\r\nBcc: victim@example.com' });
    const to = uniqueEmail('hostile');
    const id = await invoiceFor(server, m, [{ name: '<script>alert(1)</script><img src=x onerror=alert(2)> & "quoted"', price: 100 }]);
    await proceed(server, id, { clientEmail: to });
    const [mail] = await ofKind(smtp, to, 1);
    expect(mail!.to).toEqual([to]);
    const h = html(mail!);
    expect(h).not.toContain('<script>');
    expect(h).not.toContain('<img');
    expect(h).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(h).toContain('&#38; &#34;quoted&#34;');
    // The merchant name stays in the subject, on one line; no header of its own came of it.
    expect(mail!.parsed.subject).toBe('[TEST] Your payment to Evil Bcc: victim@example.com');
    expect(mail!.parsed.headers.has('bcc')).toBe(false);
    const headerBlock = mail!.raw.slice(0, mail!.raw.indexOf('\r\n\r\n'));
    expect(headerBlock).not.toMatch(/^bcc:/im);
    // The text part has the name as text.
    expect(text(mail!)).toContain('<script>alert(1)</script>');
  });

  it('no e-mail without a client e-mail: an invoice never filled sends nothing', async () => {
    const m = await server.merchant();
    const id = await invoiceFor(server, m);
    await new Promise((r) => setTimeout(r, 300));
    expect(await emailsOf(server, m, id)).toEqual([]);
  });
});
