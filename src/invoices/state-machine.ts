// The invoice lifecycle as one pure function: given what is known about an invoice's payments and what just
// happened, the next status. Every rule of docs/payments.md is here; the service only gathers the facts.
import type { Decimal } from 'decimal.js';
import type { InvoiceStatus } from './status.ts';

export interface PaymentFacts {
  status: InvoiceStatus;
  /** What the client must send (paymentDetails.amount). */
  expected: Decimal;
  /** Underpayment the merchant tolerates as paid (absolute, in the payment currency). */
  tolerance: Decimal;
  /** Sum of confirmed transfers in the invoice's payment currency. */
  confirmedTotal: Decimal;
  /** Transfers in the payment currency seen on chain but neither confirmed nor dropped. */
  unconfirmedCount: number;
}

/**
 * proceed: the client chose how to pay (the quote and address are ready);
 * payment: a transfer to the invoice address was seen, confirmed or dropped (facts already include it);
 * expire: the payment window closed; accept / refund: the merchant's decision on a short payment.
 */
export type Trigger = 'proceed' | 'payment' | 'expire' | 'accept' | 'refund';

export type Decision =
  | { kind: 'move'; to: InvoiceStatus }
  | { kind: 'stay' }
  | { kind: 'reject'; reason: string };

// Only confirmed money settles: whatever the tolerance, nothing confirmed is never paid.
const isPaidInFull = (f: PaymentFacts) => f.confirmedTotal.gt(0) && f.confirmedTotal.gte(f.expected.minus(f.tolerance));

export function decide(facts: PaymentFacts, trigger: Trigger): Decision {
  const move = (to: InvoiceStatus): Decision => (to === facts.status ? { kind: 'stay' } : { kind: 'move', to });
  switch (trigger) {
    case 'proceed':
      if (facts.status === 'created') return move('pending');
      return { kind: 'reject', reason: `only an invoice in status created can be filled (status is ${facts.status})` };
    case 'payment':
      switch (facts.status) {
        case 'pending':
        case 'processing':
        case 'wrong':
          if (isPaidInFull(facts)) return move('done');
          // Wait while any payment is still unconfirmed: it may complete the amount.
          if (facts.unconfirmedCount > 0) return facts.status === 'pending' ? move('processing') : { kind: 'stay' };
          if (facts.confirmedTotal.gt(0)) return move('wrong');
          return { kind: 'stay' };
        // Money arriving for a finished invoice is recorded (overpayment, late payment), the status stays.
        default:
          return { kind: 'stay' };
      }
    case 'expire':
      if (facts.status === 'pending') return move('closed');
      if (facts.status === 'processing') return move(facts.confirmedTotal.gt(0) ? 'wrong' : 'closed');
      return { kind: 'stay' };
    case 'accept':
      if (facts.status === 'wrong' || (facts.status === 'closed' && facts.confirmedTotal.gt(0))) return move('done');
      return { kind: 'reject', reason: `only a wrong invoice, or a closed one that received a late payment, can be accepted (status is ${facts.status})` };
    case 'refund':
      if (facts.status === 'wrong' || (facts.status === 'closed' && facts.confirmedTotal.gt(0))) return move('refunded');
      return { kind: 'reject', reason: `only a wrong invoice, or a closed one that received a late payment, can be refunded (status is ${facts.status})` };
  }
}
