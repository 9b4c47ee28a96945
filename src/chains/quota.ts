// A provider's daily request budget (CHAINS_FILE `rateLimit.perDay`: TronGrid's 100,000 a day per key, say), spent
// evenly: a token bucket refilled at perDay/24 h that holds at most an hour's worth. A catch-up after an outage spends
// that hour's worth at the per-second rate, then goes on at the day's pace; the steady state stays below it (the
// adapters' requests per hour are in docs/chains-http.md and bench/chains-http.ts), so the bucket refills.

/** Time as the limiters see it (a test moves it by hand). */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const DAY_MS = 86_400_000;
/** What the bucket holds at most: an hour of the day's budget. */
const BURST_HOURS = 1;

export class DailyBudget {
  private tokens: number;
  private at: number;
  private day: number;
  private usedToday = 0;

  constructor(
    readonly perDay: number,
    private readonly clock: Clock,
  ) {
    this.tokens = this.capacity;
    this.at = clock.now();
    this.day = Math.floor(this.at / DAY_MS);
  }

  /** Requests the bucket holds at most. */
  get capacity(): number {
    return Math.max(1, (this.perDay * BURST_HOURS) / 24);
  }

  /** How long until `n` requests may go (0: now). */
  waitMs(n: number): number {
    this.refill();
    const need = Math.min(n, this.capacity) - this.tokens;
    return need <= 0 ? 0 : Math.ceil((need * DAY_MS) / this.perDay);
  }

  spend(n: number): void {
    this.refill();
    this.tokens -= n;
    this.usedToday += n;
  }

  /** Requests left of today's budget (UTC day), whatever the pace: what the metric shows. */
  remainingToday(): number {
    this.refill();
    return Math.max(0, this.perDay - this.usedToday);
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) * this.perDay) / DAY_MS);
    this.at = now;
    const day = Math.floor(now / DAY_MS);
    if (day !== this.day) {
      this.day = day;
      this.usedToday = 0;
    }
  }
}
