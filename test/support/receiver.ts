// A real webhook receiver (node:http) that verifies both signatures the way a merchant would.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { ContractViolation, webhookViolation } from './contract.ts';

export type Behaviour = 'ok' | 'error500' | 'hang' | 'redirect';

export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  /** The spec's check: HMAC-SHA512 hex of the re-serialised JSON, keyed by the trimmed secret. */
  specSignatureValid: boolean;
  /** Standard Webhooks: v1 HMAC-SHA256 of `id.timestamp.body`, base64. */
  standardSignatureValid: boolean;
}

/** Every webhook received anywhere in the run is held to the OpenAPI document's `webhooks` (test/support/contract.ts). */

/** Requests in flight (arrived, not yet answered): how many now, and the most at any moment. */
export class InFlight {
  now = 0;
  most = 0;

  enter(): void {
    this.most = Math.max(this.most, ++this.now);
  }

  leave(): void {
    this.now--;
  }
}

export interface ReceiverOptions {
  /** Answer 'ok' this long after the request arrived, so that requests which overlap show as overlapping. */
  answerDelayMs?: number;
  /** Also count this receiver's requests here (one count across several receivers). */
  alsoCount?: InFlight;
  /** Takes bodies of kinds no feature publishes (the outbox's own tests): not held to the OpenAPI webhooks. */
  unpublished?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  behaviour: Behaviour;
  /** This receiver's requests in flight. */
  inFlight: InFlight;
  /** Answers that were answered 2xx. */
  delivered(): Received[];
  waitFor(predicate: (r: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Webhooks that broke the OpenAPI document's `webhooks`; waitFor and close throw on the first. */
  violations: string[];
  close(): Promise<void>;
}

export function verifySpecSignature(secret: string, body: string, header: string | undefined): boolean {
  // As the spec's example does: parse, then serialise again, then HMAC.
  const digest = createHmac('sha512', secret.trim()).update(JSON.stringify(JSON.parse(body))).digest('hex');
  return header !== undefined && digest.length === header.length && timingSafeEqual(Buffer.from(digest), Buffer.from(header));
}

/** The `whsec_` form the CLI prints, derived here independently: base64 of the secret key's UTF-8 bytes. */
export const whsec = (secret: string): string => `whsec_${Buffer.from(secret.trim(), 'utf8').toString('base64')}`;

/** Standard Webhooks, checked by the reference library (timestamp tolerance included) with the `whsec_` form. */
export function verifyStandardSignature(secret: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const plain: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') plain[k] = v;
  try {
    new Webhook(whsec(secret)).verify(body, plain);
    return true;
  } catch {
    return false;
  }
}

export async function startReceiver(secret: () => string, options: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  const violations: string[] = [];
  const okStatuses: boolean[] = [];
  const inFlight = new InFlight();
  const counts = [inFlight, ...(options.alsoCount ? [options.alsoCount] : [])];
  const server = http.createServer((req, res) => {
    for (const c of counts) c.enter();
    res.once('close', () => counts.forEach((c) => c.leave()));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        json = {};
      }
      const violation = options.unpublished ? null : webhookViolation(body, req.headers);
      if (violation) violations.push(violation);
      received.push({
        at: Date.now(),
        headers: req.headers,
        body,
        json,
        specSignatureValid: verifySpecSignature(secret(), body, req.headers['signature'] as string | undefined),
        standardSignatureValid: verifyStandardSignature(secret(), req.headers, body),
      });
      const mode = receiver.behaviour;
      okStatuses.push(mode === 'ok');
      const thanks = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      if (mode === 'ok') {
        if (options.answerDelayMs) setTimeout(thanks, options.answerDelayMs);
        else thanks();
      } else if (mode === 'error500') res.writeHead(500).end('boom');
      else if (mode === 'redirect') res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      // 'hang': never answer; the sender's timeout must end it.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    received,
    behaviour: 'ok',
    inFlight,
    delivered: () => received.filter((_, i) => okStatuses[i]),
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (violations.length) throw new ContractViolation(`receiver: ${violations[0]}`);
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    violations,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // A webhook that broke the published contract fails the suite that received it, whatever it asserted.
      if (violations.length) throw new ContractViolation(`receiver: ${violations.length} webhook(s) broke the OpenAPI webhooks: ${violations[0]}`);
    },
  };
  return receiver;
}
