// What autoswaps name that the layers below handle without knowing them (docs/architecture.md, "Adding a feature"):
// their webhook events and the internal one that wakes the driver, the journals of a swap (hold, the two legs, the
// venue's and our fee, the release), the accounts they post to, their ledger check, the autoswap status counter and
// the swaps a venue sends on chain from the hot wallet (which the venue follows itself).
import type { Declarations } from '../core/feature.ts';
import { autoswapStatusCheck } from './ledger-checks.ts';

export const AUTOSWAP_EVENT_TYPES = {
  'autoswap.done': 'An autoswap filled: the source amount left, the target amount is available (docs/autoswap.md).',
  'autoswap.failed': 'An autoswap did not fill (slippage beyond the cap, no route, venue down); its source amount is available again.',
} as const;

/**
 * A credit queued a swap: the driver wakes on this, wherever it runs, instead of on every invoice or deposit done
 * (most merchants have no rule). Internal: neither pushed nor in the events feed; autoswap.done/failed are the news.
 */
export const AUTOSWAP_QUEUED = 'autoswap.queued';

export const AUTOSWAP_JOURNAL_KINDS = ['autoswap_hold', 'autoswap', 'autoswap_venue_fee', 'autoswap_fee', 'autoswap_release'] as const;

export const AUTOSWAP_ACCOUNTS = {
  swap_hold: { description: 'Credits taken by swaps in flight: back to available if the swap fails, to the venue when it fills.', balance: 'held' },
  swap_venue: { description: 'What venues got from us (positive, the sold side) and gave us (negative, the bought side).' },
  venue_fees: { description: 'What venues kept of a swap\'s output (their fee).' },
} as const;

declare module '../domain/event-types.ts' {
  interface EventTypes extends Record<keyof typeof AUTOSWAP_EVENT_TYPES, true> {}
}
declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof AUTOSWAP_JOURNAL_KINDS)[number], true> {}
  interface LedgerAccounts extends Record<keyof typeof AUTOSWAP_ACCOUNTS, true> {}
}
declare module '../chains/adapter.ts' {
  interface OutgoingPurposes {
    autoswap: true;
  }
}

export const autoswapDeclarations = {
  eventTypes: AUTOSWAP_EVENT_TYPES,
  internalEventTypes: [AUTOSWAP_QUEUED],
  journalKinds: AUTOSWAP_JOURNAL_KINDS,
  ledgerAccounts: AUTOSWAP_ACCOUNTS,
  ledgerChecks: [autoswapStatusCheck],
  transitions: { autoswap: 'Autoswap status changes committed by this process, by the final status entered (done, failed).' },
  outgoingPurposes: ['autoswap'],
  // A venue reads its own swap transactions' outcomes (venues/uniswap-v2 status()): no listener of the chains' reports.
  selfFollowedPurposes: ['autoswap'],
} satisfies Declarations;
