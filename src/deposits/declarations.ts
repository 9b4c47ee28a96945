// What deposits name that the layers below handle without knowing them (docs/architecture.md, "Adding a feature"):
// their webhook events, the journals of a deposit and its fee, their ledger check and the deposit status counter.
import type { Declarations } from '../core/feature.ts';
import { depositStatusCheck } from './ledger-checks.ts';

export const DEPOSIT_EVENT_TYPES = {
  'deposit.processing': 'A deposit to a static address was seen on chain and awaits confirmations.',
  'deposit.done': 'A deposit to a static address is confirmed and credited (less its fee).',
  'deposit.failed': 'A deposit left the chain before it was confirmed; nothing was credited.',
  'deposit.frozen': 'The risk checks hold a deposit; it is recorded and not credited.',
} as const;

export const DEPOSIT_JOURNAL_KINDS = ['deposit', 'deposit_fee'] as const;

declare module '../domain/event-types.ts' {
  interface EventTypes extends Record<keyof typeof DEPOSIT_EVENT_TYPES, true> {}
}
declare module '../ledger/ledger.ts' {
  interface JournalKinds extends Record<(typeof DEPOSIT_JOURNAL_KINDS)[number], true> {}
}

export const depositDeclarations = {
  eventTypes: DEPOSIT_EVENT_TYPES,
  journalKinds: DEPOSIT_JOURNAL_KINDS,
  ledgerChecks: [depositStatusCheck],
  transitions: { deposit: 'Deposit status changes committed by this process, by the status entered.' },
} satisfies Declarations;
