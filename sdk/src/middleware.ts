// A Node/Express middleware that verifies webhooks against the raw body: mount it before any JSON body parser.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent } from './webhooks.ts';

export interface WebhookRequest extends IncomingMessage {
  /** The verified, typed event (set by the middleware). */
  payrailEvent?: WebhookEvent;
}

/** Reads the raw body, verifies it, sets `req.payrailEvent` and calls next; answers 400 to anything that does not verify. */
export function webhookMiddleware(secret: string, options: VerifyOptions & { maxBytes?: number } = {}) {
  const limit = options.maxBytes ?? 1_000_000;
  return (req: WebhookRequest, res: ServerResponse, next: (err?: unknown) => void): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        req.payrailEvent = verifyWebhook(Buffer.concat(chunks), req.headers, secret, options);
        next();
      } catch (e) {
        if (!(e instanceof WebhookVerificationError)) return next(e);
        res.writeHead(400, { 'content-type': 'text/plain' }).end(e.message);
      }
    });
    req.on('error', next);
  };
}
