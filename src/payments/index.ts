// Payments: what the chain adapters report, applied to invoices and the ledger.
import type { Feature } from '../core/feature.ts';
import { paymentDeclarations } from './declarations.ts';
import { bookingBatcher } from './batch.ts';
import { findPayees, payeeBatcher } from './payees.ts';
import { applyTransferReport } from './processor.ts';
import type { PaymentsService } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    payments: PaymentsService;
  }
}

export function paymentsFeature(): Feature {
  return {
    name: 'payments',
    declares: paymentDeclarations,
    services: (p, s) => {
      // Read when a report arrives: the deposits feature is listed after this one.
      const batched = payeeBatcher((mode, keys) => findPayees(s.invoices, mode, keys));
      const book = bookingBatcher(s.invoices);
      const payments: PaymentsService = {
        findPayees: (mode, keys) => (keys.length === 1 ? batched(mode, keys[0]!).then((payee) => [payee]) : findPayees(s.invoices, mode, keys)),
        report: (report, mode, payee) => applyTransferReport({ ...s.invoices, deposits: s.deposits, book }, report, mode, payee),
      };
      p.chains.onTransfer((report, mode) => payments.report(report, mode));
      return { payments };
    },
  };
}
