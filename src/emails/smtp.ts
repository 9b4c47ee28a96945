// Sending over SMTP with nodemailer (a well-kept library: SMTP, SMTPS, STARTTLS, MIME, header encoding). This module
// knows the credentials in SMTP_URL and keeps them to itself: what it answers, and so what is logged or recorded, has
// them replaced.
import nodemailer from 'nodemailer';
import type { RenderedEmail } from './templates.ts';

export type SendOutcome =
  | { ok: true; messageId: string; responseCode: number | null }
  /** permanent: the server answered 5xx (given up); otherwise retried (no connection, timeout, 4xx). */
  | { ok: false; permanent: boolean; responseCode: number | null; error: string };

export interface MailMessage extends RenderedEmail {
  to: string;
  /** Headers of ours (e.g. the delivery id); names and values are ours, never from an invoice. */
  headers?: Record<string, string>;
}

export interface Mailer {
  send(message: MailMessage): Promise<SendOutcome>;
  close(): void;
  /** Where mail goes, without credentials (logs, docs). */
  readonly server: string;
}

/** SMTP_URL without its user and password. */
export function describeSmtpUrl(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  return `${url.protocol}//${url.host}`;
}

/** The strings that must never leave this module: the user and password as written and decoded. */
function secretsOf(smtpUrl: string): string[] {
  const url = new URL(smtpUrl);
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return [url.password, decode(url.password), url.username, decode(url.username)].filter((s) => s.length >= 1);
}

export function smtpMailer(smtpUrl: string, from: string, timeoutMs: number): Mailer {
  const secrets = secretsOf(smtpUrl).sort((a, b) => b.length - a.length);
  const redact = (text: string) => secrets.reduce((s, secret) => s.split(secret).join('***'), text);
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    server: describeSmtpUrl(smtpUrl),
    async send(message) {
      try {
        const info = await transport.sendMail({
          from,
          // An address object, not a string to parse: the recipient is one address whatever characters it has.
          to: { name: '', address: message.to },
          subject: message.subject,
          text: message.text,
          html: message.html,
          headers: { 'Auto-Submitted': 'auto-generated', ...message.headers },
        });
        const code = Number(/^\d{3}/.exec(String(info.response ?? ''))?.[0]);
        return { ok: true, messageId: String(info.messageId ?? ''), responseCode: Number.isFinite(code) ? code : null };
      } catch (e) {
        const err = e as { responseCode?: unknown; message?: unknown; code?: unknown };
        const responseCode = typeof err.responseCode === 'number' ? err.responseCode : null;
        const text = `${typeof err.code === 'string' ? `${err.code}: ` : ''}${typeof err.message === 'string' ? err.message : String(e)}`;
        return { ok: false, permanent: responseCode !== null && responseCode >= 500, responseCode, error: redact(text).slice(0, 1000) };
      }
    },
    close: () => transport.close(),
  };
}
