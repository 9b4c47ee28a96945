// One HTTP POST of a signed webhook body, with a timeout, the SSRF guard and keep-alive connections.
import http from 'node:http';
import https from 'node:https';
import { ALLOW_PRIVATE_HINT, guardedLookup, literalHostBlocked } from './ssrf.ts';
import type { Mode } from '../domain/modes.ts';
import { specSignature, standardWebhookHeaders } from './signing.ts';

export interface SendRequest {
  url: string;
  /** The event id: the Standard Webhooks `webhook-id`, stable across retries and redeliveries. */
  eventId: string;
  body: string;
  secretKey: string;
  timestampSeconds: number;
  /** The merchant's mode, sent as `Payrail-Mode` (docs/modes.md): the body stays exactly the spec's. */
  mode: Mode;
}

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** First 1 KiB of the answer. */
  responseBody: string | null;
}

const RESPONSE_LIMIT = 1024;

export class WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    readonly timeoutMs: number,
    private readonly allowPrivate: boolean,
    maxSockets = 64,
  ) {
    const lookup = guardedLookup(allowPrivate) as never;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets, lookup } as http.AgentOptions);
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets, lookup } as https.AgentOptions);
  }

  send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const done = (r: Omit<SendResult, 'durationMs' | 'ok'>): SendResult => ({
      ...r,
      ok: r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300,
      durationMs: Math.round(performance.now() - started),
    });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return Promise.resolve(done({ statusCode: null, error: 'invalid URL', responseBody: null }));
    }
    const blockedHost = literalHostBlocked(url, this.allowPrivate);
    if (blockedHost) return Promise.resolve(done({ statusCode: null, error: `${blockedHost} is a non-public address; webhooks may not reach it ${ALLOW_PRIVATE_HINT}`, responseBody: null }));

    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendResult, 'durationMs' | 'ok'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(req.body),
          'user-agent': 'Payrail-Webhooks/1',
          'payrail-mode': req.mode,
          signature: specSignature(req.secretKey, req.body),
          ...standardWebhookHeaders(req.secretKey, req.eventId, req.timestampSeconds, req.body),
        },
      });
      // One deadline for the whole exchange: connect, send, status and body. A process starved past it (a long
      // synchronous step: an embedded database's query, a loaded machine) wakes with the timer due and the answer
      // possibly already in its socket: timers run before I/O in a loop turn, so the timeout is decided after this
      // turn's I/O (setImmediate), and an answer that had arrived wins (otherwise a failed attempt, retried, and a
      // duplicate for the receiver).
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            request.destroy();
            finish({ statusCode: null, error: `timed out after ${this.timeoutMs} ms`, responseBody: null });
          }),
        this.timeoutMs,
      );
      request.on('error', (e) => finish({ statusCode: null, error: e.message, responseBody: null }));
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < RESPONSE_LIMIT) chunks.push(c);
          size += c.length;
        });
        res.on('end', () =>
          finish({ statusCode: res.statusCode ?? null, error: null, responseBody: Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8') }),
        );
        res.on('error', (e) => finish({ statusCode: res.statusCode ?? null, error: e.message, responseBody: null }));
      });
      request.end(req.body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
