// Payout protection, pure (docs/security.md, "Payout protection"): which policy holds at a moment, what a change
// does (a strengthening at once, a weakening after the cool-down in force), and whether an address may be paid.

export interface Policy {
  allowListOnly: boolean;
  cooldownHours: number;
}

export interface PolicyState extends Policy {
  /** A weakening asked for, and when it takes effect. */
  pending: (Policy & { effectiveAt: Date }) | null;
}

/** A tenant that never set a policy: anything goes, and a cool-down of a day is ready for when it turns one on. */
export const DEFAULT_POLICY: PolicyState = { allowListOnly: false, cooldownHours: 24, pending: null };

const HOUR_MS = 3_600_000;

/** The policy in force at `now`: a pending weakening whose time came is in force. */
export function policyAt(state: PolicyState, now: Date): PolicyState {
  if (state.pending && state.pending.effectiveAt.getTime() <= now.getTime()) {
    return { allowListOnly: state.pending.allowListOnly, cooldownHours: state.pending.cooldownHours, pending: null };
  }
  return state;
}

/**
 * The state after asking for `target` at `now`. Each part that strengthens (allow-list on, a longer cool-down) holds
 * at once; each part that weakens (allow-list off, a shorter cool-down) waits for the cool-down in force now, so a
 * stolen key cannot lift the protection before the merchant notices. A new request replaces a pending one.
 */
export function changePolicy(state: PolicyState, target: Policy, now: Date): PolicyState {
  const current = policyAt(state, now);
  const immediate: Policy = {
    allowListOnly: current.allowListOnly || target.allowListOnly,
    cooldownHours: Math.max(current.cooldownHours, target.cooldownHours),
  };
  const waits = immediate.allowListOnly !== target.allowListOnly || immediate.cooldownHours !== target.cooldownHours;
  if (!waits || current.cooldownHours === 0) return { ...target, pending: null };
  return { ...immediate, pending: { ...target, effectiveAt: new Date(now.getTime() + current.cooldownHours * HOUR_MS) } };
}

export interface BookEntry {
  asset: string;
  address: string;
  tag: string | null;
  createdAt: Date;
}

/** When a book entry may be paid under `policy`. */
export const usableFrom = (entry: Pick<BookEntry, 'createdAt'>, policy: Policy): Date => new Date(entry.createdAt.getTime() + policy.cooldownHours * HOUR_MS);

/**
 * Why paying `to` (with `tag`) in `asset` is refused under the policy in force, or null. Without allowListOnly
 * every valid address passes; with it, only a book entry of the same asset, address and tag that is past the cool-down.
 */
export function payoutRefusal(state: PolicyState, book: readonly BookEntry[], item: { asset: string; to: string; tag: string | null }, now: Date): string | null {
  const policy = policyAt(state, now);
  if (!policy.allowListOnly) return null;
  const entries = book.filter((e) => e.asset === item.asset && e.address === item.to && (e.tag ?? null) === (item.tag || null));
  if (entries.length === 0) return `Receiver address is not in the payout address book (the payout policy allows only its addresses)`;
  const earliest = entries.reduce((a, b) => (a.createdAt <= b.createdAt ? a : b));
  const from = usableFrom(earliest, policy);
  if (from.getTime() > now.getTime()) {
    return `Receiver address was added to the payout address book less than ${policy.cooldownHours} h ago: usable from ${from.toISOString()}`;
  }
  return null;
}
