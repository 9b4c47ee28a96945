// Fee rates of our sends on a UTXO chain (docs/chains-utxo.md, "Fees").
import type { Decimal } from 'decimal.js';
import { Money, toMoney } from '../../domain/money.ts';
import type { UtxoChainConfig } from '../config.ts';
import { coins, type BitcoinRpc } from './rpc.ts';

/** Estimate target of the node's fee estimate, in blocks. */
const FEE_TARGET_BLOCKS = 6;
/** Satoshis per virtual byte when the node has no estimate (regtest, a fresh testnet node). Never used on main. */
export const FALLBACK_FEE_RATE = new Money(2);

/** A fee rate in coins per 1,000 virtual bytes (how nodes write them) as satoshis per virtual byte. */
export const perVbyte = (coinsPerKvB: Decimal): Decimal => coinsPerKvB.times(100_000_000).div(1_000);

/** What the fee rate is chosen from: the configuration, the node and its relay fee. */
export interface FeeSource {
  readonly network: string;
  readonly config: Pick<UtxoChainConfig, 'feeRate' | 'chain'>;
  readonly node: BitcoinRpc;
  /** The node's minimum relay fee, in satoshis per virtual byte. */
  readonly relayRate: Decimal;
}

/** Satoshis per virtual byte: CHAINS_FILE's feeRate, else the node's estimate; never below the node's relay fee. */
export async function feeRate(chain: FeeSource): Promise<Decimal> {
  if (chain.config.feeRate !== undefined) return Money.max(toMoney(chain.config.feeRate), chain.relayRate);
  const estimate = await chain.node.call<{ feerate?: unknown }>('estimatesmartfee', [FEE_TARGET_BLOCKS]);
  if (estimate.feerate !== undefined) return Money.max(perVbyte(coins(estimate.feerate)), chain.relayRate);
  if (chain.config.chain === 'main') {
    throw new Error(`${chain.network}: the node has no fee estimate yet and CHAINS_FILE sets no feeRate: nothing is sent until it has one`);
  }
  return Money.max(FALLBACK_FEE_RATE, chain.relayRate);
}
