// What withdrawals name that the layers below handle without knowing them (docs/architecture.md, "Adding a
// feature"): their webhook events, the journals of a hold, its debit and its release, their ledger check, the
// withdrawal status counter and the payouts they send on chain.
import type { Declarations } from '../core/feature.ts';
import { withdrawalStatusCheck } from './ledger-checks.ts';

export const WITHDRAWAL_EVENT_TYPES = {
  'withdrawal.processing': 'A withdrawal was accepted (txHash empty), or the chain has its transaction (txHash set).',
  'withdrawal.done': 'A withdrawal is complete on chain.',
  'withdrawal.rejected': 'A withdrawal was blocked or failed; its money is available again.',
} as const;

export const WITHDRAWAL_JOURNAL_KINDS = ['withdrawal_hold', 'withdrawal', 'withdrawal_release'] as const;

declare module '../domain/event-types.ts' {
  interface EventTypes extends Record<keyof typeof WITHDRAWAL_EVENT_TYPES, true> {}
}
declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof WITHDRAWAL_JOURNAL_KINDS)[number], true> {}
}
declare module '../chains/adapter.ts' {
  interface OutgoingPurposes {
    withdrawal: true;
  }
}

export const withdrawalDeclarations = {
  eventTypes: WITHDRAWAL_EVENT_TYPES,
  journalKinds: WITHDRAWAL_JOURNAL_KINDS,
  ledgerChecks: [withdrawalStatusCheck],
  transitions: {
    withdrawal:
      'Withdrawal status changes committed by this process, by the status entered (processing counts accepted withdrawals; the send on chain is no status change).',
  },
  outgoingPurposes: ['withdrawal'],
} satisfies Declarations;
