import { z } from 'zod';
import { configSection, milliseconds } from '../core/config-section.ts';

// No value is echoed in a problem: SMTP_URL carries credentials.
const smtpUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const url = new URL(v);
      return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an smtp:// or smtps:// URL with a host (smtp://user:pass@host:587)');

export const emailConfig = configSection(
  'EMAIL_',
  {
    /** smtp://user:pass@host:587 or smtps://...: unset, no e-mail is sent. */
    SMTP_URL: smtpUrl.optional(),
    /** The From of every e-mail, e.g. `Payrail <payments@example.com>`. */
    MAIL_FROM: z
      .string()
      .max(320)
      .regex(/^[^\r\n\u0000]*@[^\r\n\u0000]*$/, 'must be one line with an address, e.g. "Payrail <payments@example.com>"')
      .default('Payrail <payments@localhost>'),
    /** Connection, greeting and socket timeout of one SMTP exchange. */
    EMAIL_TIMEOUT_MS: milliseconds(100, 300_000, 30_000),
    /** The sender looks for due e-mails at least this often (it wakes at once for new ones). */
    EMAIL_POLL_MS: milliseconds(10, 600_000, 5_000),
    /** First retry after a failed attempt; each next one waits 4 times longer, up to EMAIL_RETRY_MAX_MS. */
    EMAIL_RETRY_MIN_MS: milliseconds(10, 3_600_000, 10_000),
    EMAIL_RETRY_MAX_MS: milliseconds(10, 86_400_000, 6 * 3_600_000),
    /** Attempts before an e-mail is given up (failed). */
    EMAIL_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(12),
    /** How long a sender's claim on an e-mail holds (longer than one SMTP exchange). */
    EMAIL_LEASE_MS: milliseconds(1_000, 3_600_000, 120_000),
    /** Client e-mails about one invoice, at most (more are recorded as suppressed). */
    EMAIL_MAX_PER_INVOICE: z.coerce.number().int().min(1).max(1000).default(10),
    /** Client e-mails of one merchant tenant to one address within 24 hours, at most. */
    EMAIL_MAX_PER_RECIPIENT_PER_DAY: z.coerce.number().int().min(1).max(100_000).default(20),
    /** E-mails of one merchant tenant within an hour, at most. */
    EMAIL_MAX_PER_MERCHANT_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
    /** Finished e-mail records (sent, failed, suppressed) are kept this long (at least a day: the caps count the last 24 hours). */
    EMAIL_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
    /** A webhook endpoint whose oldest pending delivery has failed for this long gets its merchant an e-mail. */
    EMAIL_WEBHOOK_FAILING_AFTER_MS: milliseconds(1_000, 7 * 86_400_000, 3_600_000),
  },
  (c) => (c.retryMaxMs < c.retryMinMs ? 'EMAIL_RETRY_MAX_MS: must be at least EMAIL_RETRY_MIN_MS' : c.leaseMs <= c.timeoutMs * 3 ? 'EMAIL_LEASE_MS: must be longer than 3 x EMAIL_TIMEOUT_MS' : {}),
);
