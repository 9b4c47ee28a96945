// What the sender and the sweeper use of the EVM adapter (which builds both): apart from adapter.ts so that neither
// imports the adapter back.
import type { Address } from 'viem';
import type { Network, PaymentCurrency } from '../../domain/assets.ts';
import type { EvmChainConfig } from '../config.ts';
import type { ChainContext } from '../node-adapter.ts';
import type { EvmRpc } from './rpc.ts';

export type EvmNetwork = Extract<Network, 'ethereum' | 'bsc'>;

export interface EvmHead {
  number: number;
  baseFee: bigint | null;
}

/** A configured token: its contract and the payment currency it is. */
export interface EvmToken {
  asset: PaymentCurrency;
  contract: Address;
  decimals: number;
}

export interface EvmChain {
  readonly network: EvmNetwork;
  readonly config: EvmChainConfig;
  readonly context: ChainContext;
  readonly confirmations: number;
  readonly native: PaymentCurrency;
  readonly rpc: EvmRpc;
  readonly tokens: EvmToken[];
  /** The native currency and the configured tokens. */
  readonly assets: PaymentCurrency[];
  token(asset: PaymentCurrency): EvmToken | undefined;
  isValidAddress(address: string): boolean;
  head(): Promise<EvmHead>;
}
