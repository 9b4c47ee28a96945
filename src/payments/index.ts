// Payments: what the chain adapters report, applied to invoices and the ledger.
import type { Feature } from '../core/feature.ts';
import { paymentDeclarations } from './declarations.ts';
import { applyTransferReport } from './processor.ts';

export function paymentsFeature(): Feature {
  return {
    name: 'payments',
    declares: paymentDeclarations,
    services: (p, s) => {
      // Read when a report arrives: the deposits feature is listed after this one.
      p.chains.onTransfer((report, mode) => applyTransferReport({ ...s.invoices, deposits: s.deposits }, report, mode));
      return {};
    },
  };
}
