// The caps against mail-bombing: an attacker who fills many invoices with one victim's address (proceed needs no
// token) gets a few e-mails out, the rest are recorded as suppressed and never sent; per invoice and per merchant too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { emailsOf, FAST_EMAIL_ENV, proceeded, until } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

const allEmails = async (server: TestServer, m: TestMerchant) =>
  (await server.request('GET', '/api/company/emails?limit=100', { token: m.publicToken })).body.emails as Record<string, any>[];

describe.each(DATABASES)('e-mail caps on %s', (kind) => {
  let smtp: TestSmtp;
  const env: Record<string, string> = { ...FAST_EMAIL_ENV, EMAIL_MAX_PER_INVOICE: '2', EMAIL_MAX_PER_RECIPIENT_PER_DAY: '3', EMAIL_MAX_PER_MERCHANT_PER_HOUR: '6' };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env);

  it('one victim address filled into many invoices: 3 e-mails a day, the rest suppressed; other clients unaffected', async () => {
    const m = await server.merchant();
    const victim = `victim-${Date.now()}@example.com`;
    // Case changes do not make another address.
    const spellings = [victim, victim.toUpperCase(), victim, `Victim-${victim.slice(7)}`, victim];
    for (const address of spellings) await proceeded(server, m, address);
    const emails = await until('all recorded', () => allEmails(server, m), (e) => e.length === 5 && e.every((x) => x.status !== 'pending'));
    expect(emails.filter((e) => e.status === 'sent')).toHaveLength(3);
    const suppressed = emails.filter((e) => e.status === 'suppressed');
    expect(suppressed).toHaveLength(2);
    expect(suppressed[0]).toMatchObject({ attempts: 0, sentAt: null, lastError: expect.stringContaining('EMAIL_MAX_PER_RECIPIENT_PER_DAY (3)') });
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.arrived.filter((x) => x.to.some((t) => t.toLowerCase() === victim))).toHaveLength(3);
    // Someone else still gets theirs.
    const other = `other-${Date.now()}@example.com`;
    await proceeded(server, m, other);
    await smtp.waitFor(1, other);
  });

  it('the merchant\'s own address is not capped as a client\'s: 4 payments, 4 e-mails over a cap of 3', async () => {
    const m = await server.merchant();
    const ops = `ops-uncapped-${Date.now()}@example.com`;
    await server.request('PUT', '/api/company/settings/notifications', { token: m.publicToken, json: { client: { pending: false, done: false }, merchant: { emails: [ops] } } });
    for (let i = 0; i < 4; i++) {
      const invoice = await proceeded(server, m, `payer-${i}-${Date.now()}@example.com`);
      await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: invoice.id, amount: '101', confirmations: 19 } });
    }
    await smtp.waitFor(4, ops);
    expect((await allEmails(server, m)).map((e) => [e.kind, e.status])).toEqual(Array.from({ length: 4 }, () => ['merchant.done', 'sent']));
  });

  it('per invoice: at most 2 client e-mails about one invoice', async () => {
    const m = await server.merchant();
    const to = `per-invoice-${Date.now()}@example.com`;
    const invoice = await proceeded(server, m, to);
    await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: invoice.id, amount: '60', confirmations: 19 } });
    await until('wrong sent', () => emailsOf(server, m, invoice.id), (e) => e.length === 2 && e.every((x) => x.status === 'sent'));
    expect((await server.request('POST', `/api/invoices/v1/regular/${invoice.id}/refund`, { token: m.publicToken, json: { address: TRON } })).status).toBe(200);
    const emails = await until('refund recorded', () => emailsOf(server, m, invoice.id), (e) => e.length === 3);
    expect(emails.find((e) => e.kind === 'client.refunded')).toMatchObject({ status: 'suppressed', lastError: expect.stringContaining('EMAIL_MAX_PER_INVOICE (2)') });
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.arrived.filter((x) => x.to.includes(to))).toHaveLength(2);
  });

  it('per merchant: at most 6 e-mails an hour, whatever the addresses', async () => {
    const m = await server.merchant();
    const stamp = Date.now();
    for (let i = 0; i < 7; i++) await proceeded(server, m, `many-${i}-${stamp}@example.com`);
    const emails = await until('all recorded', () => allEmails(server, m), (e) => e.length === 7 && e.every((x) => x.status !== 'pending'));
    expect(emails.filter((e) => e.status === 'sent')).toHaveLength(6);
    expect(emails.filter((e) => e.status === 'suppressed')).toEqual([expect.objectContaining({ lastError: expect.stringContaining('EMAIL_MAX_PER_MERCHANT_PER_HOUR (6)') })]);
    // Another merchant is not held back.
    const n = await server.merchant();
    const to = `next-merchant-${stamp}@example.com`;
    await proceeded(server, n, to);
    await smtp.waitFor(1, to);
    // The list filters by status.
    const listed = await server.request('GET', '/api/company/emails?status=suppressed', { token: m.publicToken });
    expect(listed.body.emails).toHaveLength(1);
  });
});

describe.each(DATABASES)('e-mail retention on %s', (kind) => {
  const server = useServer(kind, { ...FAST_EMAIL_ENV, SMTP_URL: 'smtp://127.0.0.1:9', EMAIL_RETENTION_DAYS: '30' });

  it('deletes finished records older than EMAIL_RETENTION_DAYS, keeps pending and recent ones', async () => {
    const m = await server.merchant();
    const invoice = await proceeded(server, m, `retention-${Date.now()}@example.com`);
    const [pending] = await until('a record', () => emailsOf(server, m, invoice.id), (e) => e.length === 1);
    const db = server.app.db.prisma;
    const event = await db.event.findFirstOrThrow({ where: { subjectId: invoice.id, type: 'invoice.pending' } });
    const old = new Date(Date.now() - 31 * 86_400_000);
    const recent = new Date(Date.now() - 29 * 86_400_000);
    const row = (status: string, updatedAt: Date, recipient: string) => ({
      id: crypto.randomUUID(), eventId: event.id, companyId: m.tenantId, invoiceId: invoice.id, kind: 'client.done', recipient, lang: 'en', status, nextAttemptAt: updatedAt, updatedAt, createdAt: updatedAt,
    });
    await db.emailDelivery.createMany({ data: [row('sent', old, 'a@x.example'), row('failed', old, 'b@x.example'), row('sent', recent, 'c@x.example')] });
    // The real one is pending (nothing listens on port 9): old as it may be, it is kept.
    await db.emailDelivery.update({ where: { id: pending!.id }, data: { updatedAt: old } });
    await server.app.jobs.get('email-pruner').runOnce();
    expect((await db.emailDelivery.findMany({ where: { invoiceId: invoice.id } })).map((e) => e.recipient).sort()).toEqual(['c@x.example', pending!.recipient].sort());
  });
});
