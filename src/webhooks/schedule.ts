// When to try a webhook again: quickly at first, then spreading out to about three days in all.
import { retryAt } from '../core/retry.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n+1 after attempt n failed (n = 1, 2, ...): 12 attempts over ~71.6 h. */
export const RETRY_DELAYS_MS = [5 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 10 * HOUR];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The next attempt time after `attempts` failed attempts, or null when the delivery has failed for good (core/retry.ts). */
export const nextAttemptAt = (attempts: number, now: Date, random = Math.random): Date | null => retryAt(RETRY_DELAYS_MS, attempts, now, random);
