// What differs between the UTXO networks the adapter serves: address codecs and their chain flavours. Everything
// else (RPC, scanning, consolidation, sends) is one implementation.
import type { Network } from '../../domain/assets.ts';
import type { AddressOptions } from '../address-formats.ts';
import type { HdNetwork } from '../hd.ts';

export type UtxoNetwork = Extract<HdNetwork, 'bitcoin' | 'litecoin' | 'bitcoin-cash'>;
export const UTXO_NETWORKS: readonly UtxoNetwork[] = ['bitcoin', 'litecoin', 'bitcoin-cash'];
export const isUtxoNetwork = (n: Network): n is UtxoNetwork => (UTXO_NETWORKS as readonly string[]).includes(n);

/** `chain` as getblockchaininfo names it (Bitcoin Core, Litecoin Core, Bitcoin Cash Node). */
export type UtxoChain = 'main' | 'test' | 'regtest';

export const addressOptions = (chain: UtxoChain): AddressOptions => ({ testnet: chain === 'test', regtest: chain === 'regtest' });

/** @scure/btc-signer's view of a network: how it reads and writes addresses (segwit networks only). */
export interface SignerNetwork {
  bech32: string;
  pubKeyHash: number;
  scriptHash: number;
  wif: number;
}

const BITCOIN_TEST = { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };
const LITECOIN_TEST = { bech32: 'tltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef };

/** Address parameters of the segwit networks (Bitcoin Cash's CashAddr is not a btc-signer format). */
export const SIGNER_NETWORKS: Record<Exclude<UtxoNetwork, 'bitcoin-cash'>, Record<UtxoChain, SignerNetwork>> = {
  bitcoin: {
    main: { bech32: 'bc', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 },
    test: BITCOIN_TEST,
    regtest: { ...BITCOIN_TEST, bech32: 'bcrt' },
  },
  litecoin: {
    main: { bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 },
    test: LITECOIN_TEST,
    regtest: { ...LITECOIN_TEST, bech32: 'rltc' },
  },
};
