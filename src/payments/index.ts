// Payments: what the chain adapters report, applied to invoices and the ledger.
import type { Feature } from '../core/feature.ts';
import { applyTransferReport } from './processor.ts';

export function paymentsFeature(): Feature {
  return {
    name: 'payments',
    services: (p, s) => {
      p.chains.onTransfer((report) => applyTransferReport(s.invoices, report));
      return {};
    },
  };
}
