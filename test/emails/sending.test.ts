// Sending: the e-mails of committed events go to a real SMTP server (smtp-server in this process), are retried while it
// is down or answers 4xx, given up on 5xx, and nothing is sent without SMTP_URL. Credentials never show.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { emailsOf, FAST_EMAIL_ENV, proceeded, until } from './support.ts';

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

  it('a sender that crashed after claiming an e-mail: it goes out once its lease ends, not before', async () => {
    const m = await server.merchant();
    await smtp.stop();
    const invoice = await proceeded(server, m, 'crashed-claim@example.com');
    const [record] = await until('an attempt', () => emailsOf(server, m, invoice.id), (e) => (e[0]?.attempts ?? 0) >= 1);
    // As a sender that claimed it and died would leave it: claimed for 1.5 s more, due now.
    // (An attempt of the live sender that was in flight may record over it: then claim it again.)
    for (let i = 0; i < 20; i++) {
      await server.app.db.prisma.$executeRaw`UPDATE "EmailDelivery" SET "claimedUntil" = now() + interval '1500 milliseconds', "nextAttemptAt" = now() WHERE "id" = ${record!.id}::uuid`;
      await new Promise((r) => setTimeout(r, 100));
      const row = await server.app.db.prisma.emailDelivery.findUniqueOrThrow({ where: { id: record!.id } });
      if (row.claimedUntil && row.claimedUntil.getTime() > Date.now() + 1000) break;
    }
    await smtp.start();
    await new Promise((r) => setTimeout(r, 700));
    expect(smtp.arrived.filter((a) => a.to.includes('crashed-claim@example.com'))).toHaveLength(0);
    await smtp.waitFor(1, 'crashed-claim@example.com');
    await until('sent', () => emailsOf(server, m, invoice.id), (e) => e[0]?.status === 'sent');
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

describe.each(DATABASES.filter((k) => k === 'postgres'))('an open transaction elsewhere on %s', (kind) => {
  let smtp: TestSmtp;
  const env: Record<string, string> = { ...FAST_EMAIL_ENV };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env);

  it('does not hold e-mails back (the event bus waits for it; the planner needs not), and its own events wait for its commit', async () => {
    const m = await server.merchant();
    const other = new pg.Client({ connectionString: server.databaseUrl });
    await other.connect();
    try {
      // An old transaction with a transaction id, left open: below it the bus's horizon stays.
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      const invoice = await proceeded(server, m, 'open-tx@example.com');
      await smtp.waitFor(1, 'open-tx@example.com');
      // Planned above a cursor the open transaction holds back: marked, each mark at its event's place on the bus.
      const marks = async () =>
        (
          await other.query<{ event: boolean; above: boolean }>(
            `SELECT e."id" IS NOT NULL AND (e."txid", e."seq") = (p."txid", p."seq") AS event, (p."txid", p."seq") > (c."txid", c."seq") AS above
             FROM "EmailPlanned" p LEFT JOIN "Event" e ON e."id" = p."eventId" CROSS JOIN "EmailCursor" c`,
          )
        ).rows;
      expect((await marks()).length).toBeGreaterThan(0);
      expect(await marks()).toEqual((await marks()).map(() => ({ event: true, above: true })));
      // An event the open transaction writes is not planned until it commits.
      await other.query(
        `INSERT INTO "Event" ("id", "companyId", "type", "subjectType", "subjectId", "payload") VALUES (gen_random_uuid()::text, $1::uuid, 'invoice.done', 'invoice', $2, '{}'::json)`,
        [m.tenantId, invoice.id],
      );
      await new Promise((r) => setTimeout(r, 500));
      expect((await emailsOf(server, m, invoice.id)).map((e) => e.kind)).toEqual(['client.pending']);
      await other.query('COMMIT');
      const after = await until('the late event planned', () => emailsOf(server, m, invoice.id), (e) => e.length === 2);
      expect(after.map((e) => e.kind).sort()).toEqual(['client.done', 'client.pending']);
      // Nothing holds the cursor back now: it passes every planned event, and their marks are dropped.
      await until('the marks dropped', marks, (rows) => rows.length === 0);
    } finally {
      await other.end();
    }
  });
});
