import { createHmac } from 'node:crypto';

/** The spec's `signature` header: lower-case hex HMAC-SHA512 of the exact body bytes, keyed by the trimmed secret. */
export const specSignature = (secretKey: string, body: string): string =>
  createHmac('sha512', secretKey.trim()).update(body, 'utf8').digest('hex');

/**
 * Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) over `id.timestamp.body` with
 * HMAC-SHA256. The key is the UTF-8 bytes of the trimmed secret key; standard libraries take it as
 * `whsec_` + base64(secret).
 */
export function standardWebhookHeaders(secretKey: string, id: string, timestampSeconds: number, body: string) {
  const signature = createHmac('sha256', Buffer.from(secretKey.trim(), 'utf8')).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
