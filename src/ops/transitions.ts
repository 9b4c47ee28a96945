// Status changes of the subjects features declare (Declarations.transitions: invoices, withdrawals, deposits, ...),
// counted from the events their transactions recorded, by the process that committed them (CommitSignal in
// src/core/events.ts): every status change records its event in its own transaction, so the event types are the
// transitions, and summing several instances counts each once.
import type { Declared } from '../core/feature.ts';
import type { Metrics } from '../core/metrics.ts';

/** The counters (every status shown from 0) and the function that counts committed event types. */
export function transitionCounters(metrics: Metrics, declared: Pick<Declared, 'transitions' | 'eventTypes'>): (types: readonly string[]) => void {
  const eventTypes = Object.keys(declared.eventTypes);
  const counters = new Map(
    Object.entries(declared.transitions).map(([subject, help]) => {
      const statuses = eventTypes.filter((t) => t.startsWith(`${subject}.`)).map((t) => t.slice(subject.length + 1));
      const counter = metrics.counter({
        name: `payrail_${subject}_transitions_total`,
        help,
        labelNames: ['status'],
        initial: statuses.map((status) => ({ status })),
      });
      return [subject, { counter, statuses: new Set(statuses) }] as const;
    }),
  );
  return (types) => {
    for (const type of types) {
      const dot = type.indexOf('.');
      const of = counters.get(type.slice(0, dot));
      const status = type.slice(dot + 1);
      // Other events (invoice.late_payment, ...) are no status change.
      if (of?.statuses.has(status)) of.counter.inc({ status });
    }
  };
}
