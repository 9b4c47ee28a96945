// Sandbox controls for withdrawals: the simulated chain confirms or fails an outgoing transaction, reported
// through the same path a real chain watcher uses (404 when SANDBOX=0).
import type { Withdrawal } from '../../generated/prisma/client.ts';
import type { SandboxRegistry } from '../chains/sandbox.ts';
import type { Company } from '../core/auth.ts';
import { requireTestMode } from '../core/tenants.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import type { WithdrawalDeps } from './model.ts';
import { getWithdrawal } from './queries.ts';

export interface SandboxWithdrawalDeps extends WithdrawalDeps {
  sandbox: SandboxRegistry | null;
}

async function report(deps: SandboxWithdrawalDeps, company: Company, uid: string, outcome: 'confirmed' | 'failed'): Promise<Withdrawal> {
  requireTestMode(company);
  if (!deps.sandbox) throw new NotFoundError('Sandbox endpoints exist only in test mode');
  const w = await getWithdrawal(deps, company, uid);
  if (w.stage === 'queued' || w.stage === 'sending' || !w.txHash) {
    throw new ConflictError('CONFLICT', `Withdrawal ${uid} is not on chain yet; the sender broadcasts it first (retry shortly)`);
  }
  const network = PAYMENT_CURRENCY_INFO[w.asset as PaymentCurrency].network;
  await deps.sandbox.reportOutgoing({ network, purpose: 'withdrawal', id: w.uid, txHash: w.txHash, outcome });
  return getWithdrawal(deps, company, uid);
}

export const confirmSandboxWithdrawal = (deps: SandboxWithdrawalDeps, company: Company, uid: string) => report(deps, company, uid, 'confirmed');
export const rejectSandboxWithdrawal = (deps: SandboxWithdrawalDeps, company: Company, uid: string) => report(deps, company, uid, 'failed');
