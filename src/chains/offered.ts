// Which payment currencies a merchant's mode offers (docs/modes.md): test mode every one on the sandbox chain (while
// SANDBOX=1), live mode those whose network has a node.
import { PAYMENT_CURRENCY_INFO, type OfferedNetwork, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { ValidationError } from '../errors/app-error.ts';
import type { ChainRegistry } from './adapter.ts';

export const offeredIn =
  (chains: Pick<ChainRegistry, 'isOffered'>, mode: Mode): OfferedNetwork =>
  (network) =>
    chains.isOffered(network, mode);

/** A 422 naming the currency (at `path`) when its network is not offered in `mode`. */
export function requireOffered(chains: Pick<ChainRegistry, 'isOffered'>, mode: Mode, currency: PaymentCurrency, path: string): void {
  const { network } = PAYMENT_CURRENCY_INFO[currency];
  if (chains.isOffered(network, mode)) return;
  const why = mode === 'live' ? `no node runs ${network} on this service (CHAINS_FILE)` : 'test mode is off on this service (SANDBOX=0)';
  throw new ValidationError([{ path, message: `${currency} is not offered in ${mode} mode: ${why}` }]);
}
