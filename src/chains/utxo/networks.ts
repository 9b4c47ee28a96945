// What differs between the UTXO networks the adapter serves: address codecs and their chain flavours. Everything
// else (RPC, scanning, consolidation, sends) is one implementation.
import type { Network } from '../../domain/assets.ts';
import { UTXO_ADDRESS_PARAMS, type AddressOptions, type BitcoinStyleParams } from '../address-formats.ts';
import type { HdNetwork } from '../hd.ts';

export type UtxoNetwork = Extract<HdNetwork, 'bitcoin' | 'litecoin' | 'bitcoin-cash'>;
export const UTXO_NETWORKS: readonly UtxoNetwork[] = ['bitcoin', 'litecoin', 'bitcoin-cash'];
export const isUtxoNetwork = (n: Network): n is UtxoNetwork => (UTXO_NETWORKS as readonly string[]).includes(n);

/** `chain` as getblockchaininfo names it (Bitcoin Core, Litecoin Core, Bitcoin Cash Node). */
export type UtxoChain = 'main' | 'test' | 'regtest';

export const addressOptions = (chain: UtxoChain): AddressOptions => ({ testnet: chain === 'test', regtest: chain === 'regtest' });

/** @scure/btc-signer's view of a network: how it reads and writes addresses (segwit networks only). */
export type SignerNetwork = BitcoinStyleParams;

/** Address parameters of the segwit networks (Bitcoin Cash's CashAddr is not a btc-signer format). */
export const SIGNER_NETWORKS: Record<Exclude<UtxoNetwork, 'bitcoin-cash'>, Record<UtxoChain, SignerNetwork>> = {
  bitcoin: UTXO_ADDRESS_PARAMS.btc,
  litecoin: UTXO_ADDRESS_PARAMS.ltc,
};

/**
 * The node's default dust relay fee, satoshis per virtual byte (Bitcoin Core and Bitcoin Cash Node 3, Litecoin Core
 * 30): an output worth less than creating and spending it costs at that rate is not relayed.
 */
export const DUST_RELAY_FEE: Record<UtxoNetwork, bigint> = { bitcoin: 3n, litecoin: 30n, 'bitcoin-cash': 3n };
