// Where the outcome of a send goes: the listener its purpose's feature registered (chains.onOutgoing), or nowhere
// for a purpose whose feature follows its sends itself (Feature.declares.selfFollowedPurposes). A purpose neither
// followed nor self-followed fails its report: an outcome nobody applies is a bug, not a no-op.
import type { Mode } from '../domain/modes.ts';
import type { ModeOutgoingListener, OutgoingPurpose, OutgoingReport } from './adapter.ts';

export class OutgoingListeners {
  private readonly listeners = new Map<OutgoingPurpose, ModeOutgoingListener>();

  constructor(private readonly selfFollowed: ReadonlySet<string> = new Set()) {}

  set(purpose: OutgoingPurpose, listener: ModeOutgoingListener): void {
    if (this.selfFollowed.has(purpose)) throw new Error(`outgoing ${purpose}s are followed by their feature itself (selfFollowedPurposes): no listener is registered for them`);
    this.listeners.set(purpose, listener);
  }

  report(report: OutgoingReport, mode: Mode): Promise<unknown> {
    const listener = this.listeners.get(report.purpose);
    if (listener) return listener(report, mode);
    if (this.selfFollowed.has(report.purpose)) return Promise.resolve();
    throw new Error(`no listener for outgoing ${report.purpose}s registered`);
  }
}
