// Sending: the e-mails of committed events go to a real SMTP server (smtp-server in this process), are retried while it
// is down or answers 4xx, given up on 5xx, and nothing is sent without SMTP_URL. Credentials never show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestMerchant, type TestServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';

export const FAST_EMAIL_ENV = {
  EMAIL_POLL_MS: '100',
  EMAIL_RETRY_MIN_MS: '200',
  EMAIL_RETRY_MAX_MS: '400',
  EMAIL_MAX_ATTEMPTS: '100',
  EMAIL_TIMEOUT_MS: '2000',
  EMAIL_LEASE_MS: '10000',
  MAIL_FROM: 'Payrail Test <payments@payrail.test>',
};

export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A filled invoice (pending) of `merchant` whose client is `clientEmail`. */
export async function proceeded(server: TestServer, merchant: TestMerchant, clientEmail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] } });
  expect(created.status).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail, paymentCurrency: 'trc20usdt', ...extra }, headers });
  expect(filled.status).toBe(200);
  return filled.body as { id: string; address: { address: string } };
}

export const emailsOf = async (server: TestServer, merchant: TestMerchant, invoiceId: string) =>
  (await server.request('GET', `/api/company/emails?invoiceId=${invoiceId}`, { token: merchant.publicToken })).body.emails as Record<string, any>[];

describe.each(DATABASES)('e-mail sending on %s', (kind) => {
  let smtp: TestSmtp;
  const env: Record<string, string> = { ...FAST_EMAIL_ENV };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env, { logLevel: 'debug' });

  it('sends the pending e-mail once, through the credentials of SMTP_URL, and records it as sent', async () => {
    const m = await server.merchant({ name: 'Acme Coffee' });
    const invoice = await proceeded(server, m, 'client-one@example.com');
    const [mail] = await smtp.waitFor(1, 'client-one@example.com');
    expect(mail!.from).toBe('payments@payrail.test');
    expect(mail!.parsed.subject).toContain('Acme Coffee');
    expect(smtp.logins).toContain('mailer');
    const emails = await until('the record', () => emailsOf(server, m, invoice.id), (e) => e[0]?.status === 'sent');
    expect(emails).toEqual([
      expect.objectContaining({ invoiceId: invoice.id, kind: 'client.pending', recipient: 'client-one@example.com', lang: 'en', status: 'sent', attempts: 1, lastResponseCode: 250, lastError: null }),
    ]);
    // Nothing more comes for it.
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.arrived.filter((a) => a.to.includes('client-one@example.com'))).toHaveLength(1);
  });

  it('SMTP server down for a while: retried with backoff, sent once after it returns, nothing lost', async () => {
    const m = await server.merchant();
    await smtp.stop();
    const invoice = await proceeded(server, m, 'client-outage@example.com');
    const failing = await until('failed attempts', () => emailsOf(server, m, invoice.id), (e) => (e[0]?.attempts ?? 0) >= 2);
    expect(failing[0]).toMatchObject({ status: 'pending', lastResponseCode: null, sentAt: null });
    expect(failing[0]!.lastError).toMatch(/ECONNREFUSED|connect|ESOCKET|ECONNECTION/i);
    expect(failing[0]!.nextAttemptAt).not.toBeNull();
    await smtp.start();
    await smtp.waitFor(1, 'client-outage@example.com');
    const sent = await until('sent', () => emailsOf(server, m, invoice.id), (e) => e[0]?.status === 'sent');
    expect(sent[0]!.attempts).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.arrived.filter((a) => a.to.includes('client-outage@example.com'))).toHaveLength(1);
  });

  it('4xx is retried; 5xx is recorded as failed and not retried', async () => {
    const m = await server.merchant();
    smtp.rejectWith.set('busy@example.com', 451);
    smtp.rejectWith.set('nobody@example.com', 550);
    const busy = await proceeded(server, m, 'busy@example.com');
    const dead = await proceeded(server, m, 'nobody@example.com');
    const failed = await until('failed', () => emailsOf(server, m, dead.id), (e) => e[0]?.status === 'failed');
    expect(failed[0]).toMatchObject({ attempts: 1, lastResponseCode: 550, nextAttemptAt: null, sentAt: null });
    const retried = await until('retries', () => emailsOf(server, m, busy.id), (e) => (e[0]?.attempts ?? 0) >= 2);
    expect(retried[0]).toMatchObject({ status: 'pending', lastResponseCode: 451 });
    smtp.rejectWith.delete('busy@example.com');
    await smtp.waitFor(1, 'busy@example.com');
    await until('sent', () => emailsOf(server, m, busy.id), (e) => e[0]?.status === 'sent');
    // The 5xx one stays failed with its one attempt.
    await new Promise((r) => setTimeout(r, 500));
    expect((await emailsOf(server, m, dead.id))[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(smtp.arrived.some((a) => a.to.includes('nobody@example.com'))).toBe(false);
  });

  it('the SMTP credentials are in no log line, no recorded error and not in /health', async () => {
    const logs = JSON.stringify(server.logs);
    expect(logs).toContain('e-mail: sending through this SMTP server');
    expect(logs).toContain(`smtp://127.0.0.1:${smtp.port}`);
    expect(logs).not.toContain(smtp.password);
    const m = await server.merchant();
    await smtp.stop();
    const invoice = await proceeded(server, m, 'creds@example.com');
    const e = await until('an error', () => emailsOf(server, m, invoice.id), (x) => (x[0]?.attempts ?? 0) >= 1);
    await smtp.start();
    expect(JSON.stringify(e)).not.toContain(smtp.password);
    const health = await server.request('GET', '/health');
    expect(health.text).not.toContain(smtp.password);
    expect(JSON.stringify(server.logs)).not.toContain(smtp.password);
    await until('sent', () => emailsOf(server, m, invoice.id), (x) => x[0]?.status === 'sent');
  });
});

describe.each(DATABASES)('no SMTP_URL on %s', (kind) => {
  const server = useServer(kind, { ...FAST_EMAIL_ENV }, { logLevel: 'info' });

  it('sends and records nothing, says so once at start, and the rest works', async () => {
    const m = await server.merchant();
    const invoice = await proceeded(server, m, 'client@example.com');
    await new Promise((r) => setTimeout(r, 500));
    expect(await emailsOf(server, m, invoice.id)).toEqual([]);
    expect(server.logs.filter((l) => String(l['msg']).startsWith('e-mail is off'))).toHaveLength(1);
    expect((await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`)).body.status).toBe('pending');
  });
});
