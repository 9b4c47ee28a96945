import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Mode } from '../domain/modes.ts';

/** 256 random bits, URL-safe, with a prefix that tells a leaked string's kind and mode at a glance. */
export const newPublicToken = (mode: Mode): string => `pk_${mode}_${randomBytes(32).toString('base64url')}`;
export const newSecretKey = (mode: Mode): string => `sk_${mode}_${randomBytes(32).toString('base64url')}`;

/**
 * The secret key as Standard Webhooks libraries take it: `whsec_` + base64 of the key's UTF-8 bytes (the bytes the
 * `webhook-signature` header is keyed with, docs/webhooks.md).
 */
export const standardWebhooksSecret = (secretKey: string): string => `whsec_${Buffer.from(secretKey.trim(), 'utf8').toString('base64')}`;

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
