// The merchants' webhook endpoints: each records every request it gets (the webhook-id header is the event id) in
// arrival order, and whether its 2xx answer really went out (a sender that timed out first gets none). A profile
// says how it normally answers (at once, or slowly); the fault injector makes one fail (500) or hang for a while.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { verifySpecSignature, verifyStandardSignature } from '../../test/support/receiver.ts';

export type Profile = 'ok' | 'slow';
export type Episode = 'failing' | 'hanging' | null;

export interface Arrival {
  eventId: string;
  at: number;
  /** The answer: 200, 500, or 0 for a hang. */
  answered: number;
  /** A 2xx that reached the socket completely (the sender was still there to read it). */
  acknowledged: boolean;
  /** The spec's signature over the exact body bytes, and the Standard Webhooks one (docs/webhooks.md). */
  signatureValid: boolean;
  /** The spec's signature checked as its example does, over the parsed JSON serialised again. */
  reserialisedValid: boolean;
  /** The body, kept only when the two checks disagree (for the note). */
  body?: string;
}

export class Receiver {
  readonly arrivals: Arrival[] = [];
  episode: Episode = null;
  private server!: http.Server;
  url = '';

  constructor(
    readonly label: string,
    readonly profile: Profile,
    private readonly secret: () => string,
    private readonly slowMs: () => number,
  ) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const exact = createHmac('sha512', this.secret().trim()).update(body, 'utf8').digest('hex');
        const signatureValid = req.headers['signature'] === exact && verifyStandardSignature(this.secret(), req.headers, body);
        let reserialisedValid = false;
        try {
          reserialisedValid = verifySpecSignature(this.secret(), body, req.headers['signature'] as string | undefined);
        } catch {
          reserialisedValid = false;
        }
        const arrival: Arrival = { eventId: String(req.headers['webhook-id'] ?? ''), at: Date.now(), answered: 0, acknowledged: false, signatureValid, reserialisedValid };
        if (signatureValid !== reserialisedValid) arrival.body = body;
        this.arrivals.push(arrival);
        if (this.episode === 'hanging') return; // the sender's timeout ends it
        if (this.episode === 'failing') {
          arrival.answered = 500;
          res.writeHead(500).end('failing for now');
          return;
        }
        const answer = () => {
          arrival.answered = 200;
          res.once('finish', () => (arrival.acknowledged = !res.destroyed || res.writableFinished));
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
        };
        if (this.profile === 'slow') setTimeout(answer, this.slowMs());
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
