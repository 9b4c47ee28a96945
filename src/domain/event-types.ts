// The event types the service records, as a registry the features fill: each declares its own in its folder (their
// descriptions in Feature.declares.eventTypes, their names here by declaration merging), e.g. in invoices/declarations.ts:
//   declare module '../domain/event-types.ts' { interface EventTypes extends Record<keyof typeof INVOICE_EVENT_TYPES, true> {} }
// Features build their event types with `satisfies EventType`, so a new one cannot be emitted without being declared.
// GraphQL's EventType enum and the docs' lists are built from the declarations (src/features.ts `declared`).

export interface EventTypes {}

export type EventType = keyof EventTypes & string;

/** A company's credentials changed (a token rotated): its live connections are checked again (docs/live.md). */
export const CREDENTIALS_CHANGED = 'company.credentials_changed';

/** Core's own events for the service's processes (the features declare theirs): no webhook, not in the events feed. */
export const CORE_INTERNAL_EVENT_TYPES: readonly string[] = [CREDENTIALS_CHANGED];
