// The e-mail sender's claims (core/lease.ts RowClaims, docs/leases.md): a sender whose claim expired while its SMTP
// exchange was in flight, and was taken over, records nothing of its late outcome.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailSender } from '../../src/emails/sender.ts';
import type { Mailer, SendOutcome } from '../../src/emails/smtp.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { FAST_EMAIL_ENV, proceeded, until } from './support.ts';

/** A mailer whose sends wait until the test answers them. */
function gatedMailer() {
  const calls: ((o: SendOutcome) => void)[] = [];
  let called: () => void = () => {};
  const firstCall = new Promise<void>((resolve) => (called = resolve));
  const mailer: Mailer = {
    server: 'gated',
    close: () => {},
    send: () =>
      new Promise<SendOutcome>((answer) => {
        calls.push(answer);
        called();
      }),
  };
  return { mailer, calls, firstCall };
}

describe.each(DATABASES)('e-mail claims on %s', (kind) => {
  let smtp: TestSmtp;
  // The server's own sender runs only when the planner planned something (its poll is every ten minutes).
  const env: Record<string, string> = { ...FAST_EMAIL_ENV, EMAIL_POLL_MS: '600000' };
  beforeAll(async () => {
    smtp = await startSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => smtp?.stop());
  const server = useServer(kind, env);
  const sender = (mailer: Mailer, leaseMs: number) =>
    new EmailSender({ db: server.app.platform.db, logger: server.app.logger, mailer }, { leaseMs, retryDelaysMs: [60_000], payUrl: 'http://pay.test' });

  it('a sender whose claim was taken over mid-send records nothing of its late outcome', async () => {
    const m = await server.merchant();
    const invoice = await proceeded(server, m, 'fenced@example.com');
    const prisma = server.app.db.prisma;
    const where = { invoiceId: invoice.id, recipient: 'fenced@example.com' };
    await until('the server sent it', () => prisma.emailDelivery.findFirst({ where }), (d) => d?.status === 'sent');
    // Due again, as if never sent (the server's sender stays idle: nothing new is planned).
    await prisma.emailDelivery.updateMany({ where, data: { status: 'pending', attempts: 0, nextAttemptAt: new Date(Date.now() - 1000), sentAt: null, messageId: null } });
    const { claimGeneration: before } = await prisma.emailDelivery.findFirstOrThrow({ where });

    const stale = gatedMailer();
    const staleRun = sender(stale.mailer, 200).run();
    await stale.firstCall;
    await sleep(400);
    // Its lease ran out: another sender takes the e-mail over; the SMTP server answers it 451 (retried later).
    const current = gatedMailer();
    const currentRun = sender(current.mailer, 60_000).run();
    await current.firstCall;
    current.calls[0]!({ ok: false, permanent: false, responseCode: 451, error: 'try later' });
    expect(await currentRun).toBe(1);
    const taken = await prisma.emailDelivery.findFirstOrThrow({ where });
    expect(taken).toMatchObject({ status: 'pending', attempts: 1, lastResponseCode: 451, claimGeneration: before + 2, claimedUntil: null });
    // The stale sender's acceptance comes late: unfenced, it would record the e-mail sent (and stop the retry).
    stale.calls[0]!({ ok: true, messageId: '<stale@test>', responseCode: 250 });
    expect(await staleRun).toBe(1);
    expect(await prisma.emailDelivery.findFirstOrThrow({ where })).toEqual(taken);
  });
});
