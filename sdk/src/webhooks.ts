// Webhook verification: the spec's signature (HMAC-SHA512 hex of the body, keyed by the secret key) and Standard
// Webhooks (HMAC-SHA256 of `id.timestamp.body`, with a timestamp tolerance). Both over the raw body bytes.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './generated/openapi.ts';

/** Every webhook body Payrail sends, typed from the OpenAPI document's `webhooks`. */
export type InvoiceWebhook = components['schemas']['InvoiceWebhook'];
export type WithdrawalWebhook = components['schemas']['WithdrawalWebhook'];
export type DepositWebhook = components['schemas']['DepositWebhook'];
export type TestWebhook = components['schemas']['TestWebhook'];
export type WebhookEvent =
  | { kind: 'invoice'; body: InvoiceWebhook }
  | { kind: 'withdrawal'; body: WithdrawalWebhook }
  | { kind: 'deposit'; body: DepositWebhook }
  | { kind: 'test'; body: TestWebhook };

export type Headers = Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Standard Webhooks: how old (or how far ahead) `webhook-timestamp` may be, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Which signature to require: `standard` (default when its headers are there), or the spec's `signature`. */
  scheme?: 'standard' | 'spec' | 'any';
  /** Now, in ms (tests). */
  now?: number;
}

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name] ?? headers[name.toLowerCase()] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
};

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The secret key as the spec uses it (`sk_…`, trimmed), from it or from its `whsec_` form. */
function secretBytes(secret: string): Buffer {
  const s = secret.trim();
  return s.startsWith('whsec_') ? Buffer.from(s.slice('whsec_'.length), 'base64') : Buffer.from(s, 'utf8');
}

export function verifySpecSignature(body: string | Buffer, headers: Headers, secret: string): boolean {
  const expected = createHmac('sha512', secretBytes(secret)).update(body).digest('hex');
  return same(expected, header(headers, 'signature') ?? '');
}

export function verifyStandardSignature(body: string | Buffer, headers: Headers, secret: string, options: VerifyOptions = {}): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = Number(header(headers, 'webhook-timestamp'));
  const signatures = header(headers, 'webhook-signature') ?? '';
  if (!id || !Number.isInteger(timestamp)) return false;
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return signatures.split(' ').some((s) => same(s, `v1,${expected}`));
}

/** Which published webhook a body is (they are told apart by their fields, as docs/webhooks.md says). */
export function classify(body: Record<string, unknown>): WebhookEvent {
  if (body['type'] === 'withdrawal') return { kind: 'withdrawal', body: body as WithdrawalWebhook };
  if (body['type'] === 'test') return { kind: 'test', body: body as TestWebhook };
  if (typeof body['invoiceId'] === 'string') return { kind: 'invoice', body: body as InvoiceWebhook };
  if (typeof body['depositAddress'] === 'string') return { kind: 'deposit', body: body as DepositWebhook };
  throw new WebhookVerificationError('Not a webhook body this SDK knows');
}

/**
 * Checks a webhook against the raw body and its headers and answers the typed event; throws
 * WebhookVerificationError when the signature does not hold or (Standard Webhooks) the timestamp is stale.
 * `secret` is the secret key (`sk_…`) or its `whsec_` form.
 */
export function verifyWebhook(body: string | Buffer, headers: Headers, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const scheme = options.scheme ?? (header(headers, 'webhook-signature') ? 'standard' : 'spec');
  const ok =
    scheme === 'spec' ? verifySpecSignature(body, headers, secret)
    : scheme === 'standard' ? verifyStandardSignature(body, headers, secret, options)
    : verifyStandardSignature(body, headers, secret, options) || verifySpecSignature(body, headers, secret);
  if (!ok) throw new WebhookVerificationError(`The webhook's ${scheme === 'spec' ? 'signature' : 'signature or timestamp'} does not verify`);
  return classify(JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as Record<string, unknown>);
}
