import { describe, expect, it } from 'vitest';
import { Money } from '../../src/domain/money.ts';
import { decide, type Decision, type PaymentFacts, type Trigger } from '../../src/invoices/state-machine.ts';
import { INVOICE_STATUSES, type InvoiceStatus } from '../../src/invoices/status.ts';

const TRIGGERS: Trigger[] = ['proceed', 'payment', 'expire', 'accept', 'refund'];

type Paid = 'none' | 'short' | 'withinTolerance' | 'full' | 'over';
const PAID: Record<Paid, string> = { none: '0', short: '50', withinTolerance: '100.5', full: '101', over: '150' };

const facts = (status: InvoiceStatus, paid: Paid, unconfirmed: number): PaymentFacts => ({
  status,
  expected: new Money('101'),
  tolerance: new Money('1'),
  confirmedTotal: new Money(PAID[paid]),
  unconfirmedCount: unconfirmed,
});

const to = (status: InvoiceStatus): Decision => ({ kind: 'move', to: status });
const stay: Decision = { kind: 'stay' };

/** The whole table, written out independently of the implementation. */
function expected(status: InvoiceStatus, trigger: Trigger, paid: Paid, unconfirmed: number): Decision | 'reject' {
  const inFull = paid === 'withinTolerance' || paid === 'full' || paid === 'over';
  switch (trigger) {
    case 'proceed':
      return status === 'created' ? to('pending') : 'reject';
    case 'payment':
      if (status === 'pending' || status === 'processing' || status === 'wrong') {
        if (inFull) return to('done');
        if (unconfirmed > 0) return status === 'pending' ? to('processing') : stay;
        if (paid === 'short') return status === 'wrong' ? stay : to('wrong');
        return stay;
      }
      return stay;
    case 'expire':
      if (status === 'pending') return to('closed');
      if (status === 'processing') return paid === 'none' ? to('closed') : to('wrong');
      return stay;
    case 'accept':
      return status === 'wrong' || (status === 'closed' && paid !== 'none') ? to('done') : 'reject';
    case 'refund':
      return status === 'wrong' || (status === 'closed' && paid !== 'none') ? to('refunded') : 'reject';
  }
}

describe('invoice state machine', () => {
  const cases: [InvoiceStatus, Trigger, Paid, number][] = [];
  for (const status of INVOICE_STATUSES)
    for (const trigger of TRIGGERS)
      for (const paid of Object.keys(PAID) as Paid[]) for (const unconfirmed of [0, 1, 3]) cases.push([status, trigger, paid, unconfirmed]);

  it.each(cases)('%s + %s (paid %s, %i unconfirmed)', (status, trigger, paid, unconfirmed) => {
    const want = expected(status, trigger, paid, unconfirmed);
    const got = decide(facts(status, paid, unconfirmed), trigger);
    if (want === 'reject') expect(got.kind).toBe('reject');
    else expect(got).toEqual(want);
  });

  it('covers every status and trigger', () => {
    expect(cases).toHaveLength(INVOICE_STATUSES.length * TRIGGERS.length * 5 * 3);
  });

  it('never leaves a terminal status on its own', () => {
    for (const status of ['done', 'refunded'] as const) {
      for (const trigger of ['payment', 'expire'] as const) {
        expect(decide(facts(status, 'over', 2), trigger)).toEqual(stay);
      }
    }
  });

  it('uses the tolerance: just inside is done, just outside is wrong', () => {
    const f = (paid: string): PaymentFacts => ({ status: 'processing', expected: new Money('100'), tolerance: new Money('0.5'), confirmedTotal: new Money(paid), unconfirmedCount: 0 });
    expect(decide(f('99.5'), 'payment')).toEqual(to('done'));
    expect(decide(f('99.49999999'), 'payment')).toEqual(to('wrong'));
  });
});
