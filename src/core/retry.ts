// When to try an outbound delivery again (webhooks, e-mails): each feature keeps its own list of delays; the jitter
// and the end of the list are the same for all.

/**
 * The time of the next attempt after `attempts` failed attempts (1, 2, ...), or null when `delaysMs` has run out and
 * the delivery has failed for good. Jitter only ever adds up to 10%, so a retry never comes earlier than the list says.
 */
export function retryAt(delaysMs: readonly number[], attempts: number, now: Date, random = Math.random): Date | null {
  const delay = delaysMs[attempts - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + delay + Math.floor(delay * 0.1 * random()));
}
