// E-mails to the paying client and the merchant, from committed events (docs/emails.md): the planner turns events into
// deliveries, the sender sends them over SMTP with retries, the watch notices failing webhook endpoints.
import type { Feature } from '../core/feature.ts';
import { emailDeclarations } from './declarations.ts';
import { intervalJob, wakingOn, type Job } from '../core/jobs.ts';
import type { ConfigOf } from '../core/config-section.ts';
import type { emailConfig } from './config.ts';
import './graphql.ts';
import { EMAIL_EVENT_TYPES } from './kinds.ts';
import { EmailPlanner } from './planner.ts';
import { emailRoutes } from './rest.ts';
import { EmailSender, retryDelays } from './sender.ts';
import { pruneEmails, type EmailDeps } from './service.ts';
import { smtpMailer, type Mailer } from './smtp.ts';
import { noticeFailingWebhooks } from './webhook-watch.ts';

declare module '../core/feature.ts' {
  interface Services {
    emails: EmailDeps;
  }
}

export type EmailConfig = ConfigOf<typeof emailConfig>;

export function emailsFeature(config: EmailConfig): Feature {
  let mailer: Mailer | null = null;
  return {
    name: 'emails',
    declares: emailDeclarations,
    services: (platform) => {
      if (config.smtpUrl) {
        mailer = smtpMailer(config.smtpUrl, config.mailFrom, config.timeoutMs);
        platform.logger.info({ smtp: mailer.server }, 'e-mail: sending through this SMTP server');
      } else {
        platform.logger.info('e-mail is off: SMTP_URL is not set, no e-mail is sent (docs/emails.md)');
      }
      return { emails: { db: platform.db, sending: mailer !== null } };
    },
    routes: emailRoutes,
    jobs: (platform) => {
      const { db, logger, bus } = platform;
      const jobs: Job[] = [];
      let sender: Job | null = null;
      if (mailer) {
        const emailSender = new EmailSender(
          { db, logger, mailer },
          { leaseMs: config.leaseMs, retryDelaysMs: retryDelays(config.retryMinMs, config.retryMaxMs, config.maxAttempts), payUrl: platform.config.payUrl },
        );
        const job = intervalJob('email-sender', config.pollMs, () => emailSender.run(), logger);
        // A stop lets the attempt in flight finish and starts no other (a slow SMTP server must not outlast shutdown).
        sender = { ...job, stop: () => (emailSender.halt(), job.stop()) };
        jobs.push(
          sender,
          intervalJob('email-webhook-watch', Math.min(60_000, Math.max(1_000, Math.floor(config.webhookFailingAfterMs / 4))), () =>
            noticeFailingWebhooks({ db, events: platform.commits }, config.webhookFailingAfterMs), logger),
        );
      }
      const planner = new EmailPlanner({
        db,
        logger,
        caps: { maxPerInvoice: config.maxPerInvoice, maxPerRecipientPerDay: config.maxPerRecipientPerDay, maxPerMerchantPerHour: config.maxPerMerchantPerHour },
        // Without SMTP the planner only moves past events: turning e-mail on later does not send the old ones.
        sending: mailer !== null,
        planned: () => void sender?.runOnce(),
      });
      const types = new Set(EMAIL_EVENT_TYPES);
      jobs.push(intervalJob('email-pruner', 3_600_000, () => pruneEmails(db, new Date(Date.now() - config.retentionDays * 86_400_000)), logger));
      jobs.unshift(wakingOn(intervalJob('email-planner', config.pollMs, () => planner.run(), logger), bus, (m) => types.has(m.type)));
      return jobs;
    },
    close: async () => mailer?.close(),
  };
}
