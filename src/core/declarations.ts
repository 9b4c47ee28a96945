// What features name that the layers below handle without knowing them: each feature declares its event types,
// journal kinds, ledger accounts and checks, metrics subjects and outgoing purposes where it lives (Feature.declares), and the
// wiring merges them here (src/features.ts `declared`). A name declared twice is refused at start-up.
import { CORE_INTERNAL_EVENT_TYPES } from '../domain/event-types.ts';
import { ACCOUNTS } from '../ledger/ledger.ts';
import type { Declared, Feature, LedgerAccountOf, LedgerCheckOf } from './feature.ts';

/** Merges the features' declarations; throws naming the first name two of them (or a feature and core) declare. */
export function declarationsOf(features: readonly Pick<Feature, 'name' | 'declares'>[]): Declared {
  const owners = new Map<string, string>();
  const claim = (what: string, name: string, owner: string) => {
    const key = `${what} ${name}`;
    const earlier = owners.get(key);
    if (earlier) throw new Error(`${key} is declared by both ${earlier} and ${owner}`);
    owners.set(key, owner);
  };
  for (const type of CORE_INTERNAL_EVENT_TYPES) claim('event type', type, 'core');
  for (const account of Object.values(ACCOUNTS)) claim('ledger account', account, 'the ledger');
  const declared = {
    eventTypes: {} as Record<string, string>,
    internalEventTypes: [...CORE_INTERNAL_EVENT_TYPES],
    transitions: {} as Record<string, string>,
    journalKinds: [] as string[],
    ledgerAccounts: {} as Record<string, LedgerAccountOf>,
    outgoingPurposes: [] as string[],
    selfFollowedPurposes: [] as string[],
    ledgerChecks: [] as LedgerCheckOf[],
  };
  for (const { name, declares: d = {} } of features) {
    for (const [type, description] of Object.entries(d.eventTypes ?? {})) {
      claim('event type', type, name);
      declared.eventTypes[type] = description;
    }
    for (const type of d.internalEventTypes ?? []) {
      claim('event type', type, name);
      declared.internalEventTypes.push(type);
    }
    for (const [subject, help] of Object.entries(d.transitions ?? {})) {
      claim('metrics subject', subject, name);
      if (!Object.keys(d.eventTypes ?? {}).some((t) => t.startsWith(`${subject}.`))) {
        throw new Error(`metrics subject ${subject} of ${name} has no event types ${subject}.<status> to count`);
      }
      declared.transitions[subject] = help;
    }
    for (const kind of d.journalKinds ?? []) {
      claim('journal kind', kind, name);
      declared.journalKinds.push(kind);
    }
    for (const [account, declaration] of Object.entries(d.ledgerAccounts ?? {})) {
      claim('ledger account', account, name);
      declared.ledgerAccounts[account] = declaration;
    }
    for (const purpose of d.outgoingPurposes ?? []) {
      claim('outgoing purpose', purpose, name);
      declared.outgoingPurposes.push(purpose);
    }
    for (const purpose of d.selfFollowedPurposes ?? []) {
      if (!d.outgoingPurposes?.includes(purpose)) throw new Error(`self-followed purpose ${purpose} of ${name} is not one of its outgoing purposes`);
      declared.selfFollowedPurposes.push(purpose);
    }
    for (const check of d.ledgerChecks ?? []) {
      claim('ledger check', check.name, name);
      declared.ledgerChecks.push(check);
    }
  }
  return declared;
}
