// What other features reach payments through: the one payee lookup and the one report entry every transfer takes.
import type { ChainTransfer } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import type { Mode } from '../domain/modes.ts';
import type { Payee, PayeeKey } from './payees.ts';

export interface PaymentsService {
  /** findPayees (payees.ts): the payee of each key among `mode`'s merchants, in one round trip. */
  findPayees(mode: Mode, keys: readonly PayeeKey[]): Promise<(Payee | null)[]>;
  /** applyTransferReport (processor.ts), the entry of a chain watcher's reports; `payee` when already looked up. */
  report(report: TransferReport, mode: Mode, payee?: Payee | null): Promise<ChainTransfer>;
}
