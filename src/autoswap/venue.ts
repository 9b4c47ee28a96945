// One interface for every place an autoswap can be filled (docs/autoswap.md): the sandbox in test mode, Uniswap V2 on
// an EVM network in live mode, an exchange through ccxt later. The autoswap service owns the swap's state and its
// ledger legs; a venue only fills orders, at most once per swap id.
import type { Decimal } from 'decimal.js';
import type { PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';

export interface SwapOrder {
  /** The swap's id, given to the venue as its idempotency id: a retry after a crash never fills twice. */
  swapId: string;
  mode: Mode;
  from: PaymentCurrency;
  to: PaymentCurrency;
  /** Exact amount of `from` to sell. */
  amount: Decimal;
  /** The least amount of `to` the venue may deliver (fixed before submission from the rate and the slippage cap). */
  minOut: Decimal;
  /** The venue must not fill after this instant. */
  deadline: Date;
}

export type SwapState =
  /** Submitted (ref: the transaction hash or the venue's order id), not final yet. */
  | { state: 'pending'; ref: string }
  /** Filled: `toAmount` of `to` received (after the venue's fee), `venueFee` in `to`. */
  | { state: 'filled'; ref: string; toAmount: Decimal; venueFee: Decimal }
  /** Not filled and never will be: the source amount goes back. `retryable`: worth another attempt later. */
  | { state: 'failed'; ref: string | null; reason: string; retryable: boolean };

export interface SwapVenue {
  readonly name: string;
  /** Whether a route from `from` to `to` exists on this venue in this mode. */
  supports(mode: Mode, from: PaymentCurrency, to: PaymentCurrency): boolean;
  /** The least amount of `from` this venue takes for the pair, or null for no minimum. */
  minimum(from: PaymentCurrency, to: PaymentCurrency): Decimal | null;
  /** Submits the order. Idempotent per `order.swapId`: a second call answers the first call's order, never a new one. */
  submit(order: SwapOrder): Promise<SwapState>;
  /** The state now of an order submitted before (also after a restart), by its swap id and the ref submit gave. */
  status(order: SwapOrder, ref: string | null): Promise<SwapState>;
}
