// Brute force on credentials (docs/security.md, "Brute force"): failed authentications are counted per client
// address over a sliding window. Past one threshold each further failure is answered late; past another the
// address's failures are refused with 429 and Retry-After for a while. Only failures count and only failures are
// slowed or refused: a valid token passes from any address, so an attacker sharing (or spoofing) a merchant's
// address cannot lock the merchant out of its own key. Per process, in memory: with several instances each counts
// what it sees (a client spread over n instances gets n times the budget).
import { RateLimitedError } from '../errors/app-error.ts';

export interface ThrottleOptions {
  slowdownAfter: number;
  blockAfter: number;
  blockMs: number;
  windowMs?: number;
  /** Addresses followed at once; the oldest are forgotten past it (bounded memory under a spread attack). */
  maxAddresses?: number;
}

/** The longest a failure is answered late. */
export const MAX_DELAY_MS = 2_000;

export class AuthThrottle {
  private readonly byAddress = new Map<string, { failures: number[]; blockedUntil: number }>();
  private readonly windowMs: number;
  private readonly maxAddresses: number;

  constructor(
    private readonly options: ThrottleOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = options.windowMs ?? 600_000;
    this.maxAddresses = options.maxAddresses ?? 100_000;
  }

  /**
   * Records a failed authentication from `address`: how long to hold the failure's answer back, or a 429 to throw
   * instead of it when the address is refused.
   */
  failed(address: string): { delayMs: number; refusal: RateLimitedError | null } {
    const now = this.now();
    let entry = this.byAddress.get(address);
    if (entry) this.byAddress.delete(address);
    else {
      if (this.byAddress.size >= this.maxAddresses) this.byAddress.delete(this.byAddress.keys().next().value!);
      entry = { failures: [], blockedUntil: 0 };
    }
    // Re-inserted: the map's order is least recently failed first.
    this.byAddress.set(address, entry);
    // A block that ended starts the count afresh.
    if (entry.blockedUntil !== 0 && entry.blockedUntil <= now) entry = { failures: [], blockedUntil: 0 };
    this.byAddress.set(address, entry);
    entry.failures = entry.failures.filter((t) => t > now - this.windowMs);
    entry.failures.push(now);
    if (entry.blockedUntil <= now && entry.failures.length > this.options.blockAfter) entry.blockedUntil = now + this.options.blockMs;
    if (entry.blockedUntil > now) {
      const seconds = Math.ceil((entry.blockedUntil - now) / 1000);
      return { delayMs: 0, refusal: new RateLimitedError(`Too many failed authentications from this address: retry in ${seconds} s`, seconds) };
    }
    const over = entry.failures.length - this.options.slowdownAfter;
    return { delayMs: over > 0 ? Math.min(MAX_DELAY_MS, 100 * 2 ** Math.min(over - 1, 10)) : 0, refusal: null };
  }
}
