// What a scan does with what the node says of a transaction, pure. Confirmations as the node counts them: 0 for a
// transaction in no block, negative (minus the depth of the conflicting transaction) for one a conflicting
// transaction in the chain made impossible.

/** What we recorded of an incoming output (a ChainTransfer row), if anything. */
export interface KnownTransfer {
  /** `frozen`: a deposit the risk hook holds (recorded, never credited: nothing more to report). */
  state: 'seen' | 'confirmed' | 'dropped' | 'frozen';
  confirmations: number;
}

export type IncomingStep =
  /** Report it (new, or more confirmations than recorded). */
  | 'report'
  /** Report it dropped: a conflicting transaction is as deep as a payment needs to be final. */
  | 'drop'
  /** Nothing new. */
  | 'none'
  /** It was credited and a reorg took its confirmations: not undone automatically, an operator must look. */
  | 'credited-lost'
  /** It was recorded dropped and is in the chain again: it arrived but does not count; an operator must look. */
  | 'dropped-back';

export function incomingStep(known: KnownTransfer | undefined, confirmations: number, required: number): IncomingStep {
  if (!known) return confirmations >= 0 ? 'report' : 'none';
  switch (known.state) {
    case 'seen':
      if (confirmations < 0) return -confirmations >= required ? 'drop' : 'none';
      return confirmations > known.confirmations ? 'report' : 'none';
    case 'confirmed':
      // Fewer than when it was credited, and too few: the block that held it left the chain.
      return confirmations < known.confirmations && confirmations < required ? 'credited-lost' : 'none';
    case 'dropped':
      return confirmations > 0 ? 'dropped-back' : 'none';
    case 'frozen':
      return 'none';
  }
}

export type SendStep =
  /** Final: as deep as a payment needs to be. */
  | 'confirm'
  /** A conflicting transaction is that deep: this one can never confirm. */
  | 'fail'
  /** In a block: the node has it (a send stored but not known to be broadcast yet). */
  | 'mark-sent'
  /** In no block: offer it to the node again (it may have left the mempool, or never reached it). */
  | 'offer'
  | 'wait';

/** `confirmations`: what the node says of the transaction, null when it does not know it at all. */
export function sendStep(status: 'signed' | 'sent', confirmations: number | null, required: number): SendStep {
  if (confirmations === null || confirmations === 0) return 'offer';
  if (confirmations >= required) return 'confirm';
  if (confirmations < 0) return -confirmations >= required ? 'fail' : 'wait';
  return status === 'signed' ? 'mark-sent' : 'wait';
}
