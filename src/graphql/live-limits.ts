// What one client address and one merchant may hold open on the live transports at once: graphql-ws connections
// and SSE streams count together. Every limit applies to anonymous callers too (by address).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credential } from '../core/auth.ts';
import { AppError } from '../errors/app-error.ts';
import type { LiveSessions } from './live-sessions.ts';

/** Counts per key of what is open now. */
class Counter {
  private readonly counts = new Map<string, number>();
  /** Takes one for `key` unless `max` are taken; answers whether it did. */
  take(key: string, max: number): boolean {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return false;
    this.counts.set(key, n + 1);
    return true;
  }
  give(key: string): void {
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }
}

export interface LiveLimitOptions {
  maxConnectionsPerIp: number;
  maxConnectionsPerMerchant: number;
  maxSubscriptionsPerConnection: number;
}

export const tooManyConnections = (scope: 'address' | 'merchant', max: number) =>
  new AppError('RATE_LIMITED', `Too many live connections for this ${scope} (at most ${max} at once); close one first`);

export const tooManySubscriptions = (max: number) =>
  new AppError('RATE_LIMITED', `At most ${max} subscriptions may run on one connection; complete one first`);

/** One slot: released once, whatever calls release first (close, error, shutdown). */
export interface LiveSlot {
  /** Counts the connection against its merchant too; false (and nothing taken) when the merchant is at its limit. */
  forMerchant(merchantId: string): boolean;
  release(): void;
}

export class LiveLimits {
  private readonly perIp = new Counter();
  private readonly perMerchant = new Counter();

  constructor(readonly options: LiveLimitOptions) {}

  /** A connection from `ip`, or null when the address holds its maximum. */
  open(ip: string): LiveSlot | null {
    if (!this.perIp.take(ip, this.options.maxConnectionsPerIp)) return null;
    let merchant: string | null = null;
    let released = false;
    return {
      forMerchant: (merchantId) => {
        if (merchant !== null || released) return true;
        if (!this.perMerchant.take(merchantId, this.options.maxConnectionsPerMerchant)) return false;
        merchant = merchantId;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.perIp.give(ip);
        if (merchant !== null) this.perMerchant.give(merchant);
      },
    };
  }
}

/** How an SSE stream was admitted: refused with an error, or admitted with the signal that ends it early. */
export type SseAdmission = { refused: AppError } | { refused: null; ended: AbortSignal };

/** SSE streams (GraphQL over `Accept: text/event-stream`) held open now, against the same limits as WebSockets. */
export class SseStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(
    private readonly limits: LiveLimits,
    private readonly authenticate: (authorization: string | undefined, req: IncomingMessage) => Promise<{ company: { id: string }; credential: Credential } | null>,
    private readonly addressOf: (req: IncomingMessage) => string,
    private readonly sessions: LiveSessions,
  ) {}

  /** SSE streams open now (metrics). */
  get size(): number {
    return this.open.size;
  }

  /**
   * Counts the stream until its response closes; answers the error to send instead when the client address or
   * the merchant holds its maximum. A bad token is not refused here: the GraphQL layer answers it as usual. An
   * authenticated stream is followed (LiveSessions): `ended` fires when its credential stops holding, and its
   * subscription then ends (src/graphql/live.ts); a stream its client does not read is cut off a second later.
   */
  async admit(req: IncomingMessage, res: ServerResponse): Promise<SseAdmission> {
    const { maxConnectionsPerIp, maxConnectionsPerMerchant } = this.limits.options;
    const slot = this.limits.open(this.addressOf(req));
    if (!slot) return { refused: tooManyConnections('address', maxConnectionsPerIp) };
    const ending = new AbortController();
    let untrack = () => {};
    let closed = false;
    // Released whenever the response closes, the client leaving while its token is looked up included.
    this.open.add(res);
    res.once('close', () => {
      closed = true;
      this.open.delete(res);
      slot.release();
      untrack();
    });
    const since = this.sessions.mark();
    const found = await this.authenticate(req.headers.authorization, req).catch(() => null);
    if (found && !closed) {
      if (!slot.forMerchant(found.company.id)) {
        this.open.delete(res);
        slot.release();
        return { refused: tooManyConnections('merchant', maxConnectionsPerMerchant) };
      }
      untrack = this.sessions.track(
        found.credential,
        () => {
          ending.abort();
          setTimeout(() => res.destroy(), 1_000).unref();
        },
        since,
      );
    }
    return { refused: null, ended: ending.signal };
  }

  /** Ends every stream (shutdown): clients reconnect, to another instance if there is one. */
  closeAll(): void {
    for (const res of this.open) res.destroy();
  }
}
