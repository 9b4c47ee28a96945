// Hierarchical deterministic keys (BIP-32 through @scure/bip32): receiving addresses derive from an account's
// extended PUBLIC key, so the API server holds no private key for receiving; the signer (signer.ts) derives the
// matching private keys from the mnemonic. Addresses are the external chain of the account: <account>/0/<index>.
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { HDKey, type Versions } from '@scure/bip32';
import type { Network } from '../domain/assets.ts';
import { encodeAddress, type AddressOptions } from './address-formats.ts';

/** The networks whose receiving addresses derive from an extended public key (secp256k1, non-hardened children). */
export type HdNetwork = Extract<Network, 'bitcoin' | 'litecoin' | 'bitcoin-cash' | 'ethereum' | 'bsc' | 'tron'>;
export const HD_NETWORKS: readonly HdNetwork[] = ['bitcoin', 'litecoin', 'bitcoin-cash', 'ethereum', 'bsc', 'tron'];
export const isHdNetwork = (n: Network): n is HdNetwork => (HD_NETWORKS as readonly string[]).includes(n);

/**
 * The account each network's extended public key is exported at (docs/chains.md): BIP-84 (native segwit) for
 * Bitcoin and Litecoin, BIP-44 for Bitcoin Cash (CashAddr P2PKH), Ethereum, BSC and Tron. BSC takes the second
 * account of coin type 60: with the first one, every address would be one on both chains, and a payment sent on
 * the wrong chain would credit whoever holds that index there. Test networks (testnet, regtest) of the UTXO chains
 * use coin type 1, as BIP-44 says; EVM test chains are told apart by chain id, not by path.
 */
export const ACCOUNT_PATHS: Record<HdNetwork, { main: string; test: string }> = {
  bitcoin: { main: "m/84'/0'/0'", test: "m/84'/1'/0'" },
  litecoin: { main: "m/84'/2'/0'", test: "m/84'/1'/0'" },
  'bitcoin-cash': { main: "m/44'/145'/0'", test: "m/44'/1'/0'" },
  ethereum: { main: "m/44'/60'/0'", test: "m/44'/60'/0'" },
  bsc: { main: "m/44'/60'/1'", test: "m/44'/60'/1'" },
  tron: { main: "m/44'/195'/0'", test: "m/44'/195'/0'" },
};

/** Extended-key version bytes wallets export: BIP-32 xpub/tpub, SLIP-132 zpub/vpub (BIP-84), Litecoin Ltub/Mtub. */
const VERSIONS: Record<string, Versions> = {
  xpub: { public: 0x0488b21e, private: 0x0488ade4 },
  tpub: { public: 0x043587cf, private: 0x04358394 },
  zpub: { public: 0x04b24746, private: 0x04b2430c },
  vpub: { public: 0x045f1cf6, private: 0x045f18bc },
  Ltub: { public: 0x019da462, private: 0x019d9cfe },
  Mtub: { public: 0x01b26ef6, private: 0x01b26792 },
};

/**
 * An account's extended public key, in any of the forms above. A private key (xprv, ...) is refused: the API server
 * must never hold one.
 */
export function parseExtendedPublicKey(text: string): HDKey {
  const versions = VERSIONS[text.slice(0, 4)];
  if (!versions) {
    const hint = /^[a-zA-Z]prv|^[a-zA-Z]{4}prv/.test(text) || text.slice(1, 4) === 'prv' ? ' (this looks like a PRIVATE key: give the public one)' : '';
    throw new Error(`not an extended public key (xpub, tpub, zpub, vpub, Ltub or Mtub)${hint}`);
  }
  const key = HDKey.fromExtendedKey(text, versions);
  if (key.privateKey) throw new Error('an extended PRIVATE key: give the public one');
  return key;
}

/**
 * An account key in plain BIP-32 form, whatever version bytes it came in: xpub on main networks, tpub on test
 * networks (what Bitcoin Core's descriptors and most wallets read).
 */
export function extendedPublicKey(account: HDKey, test: boolean): string {
  return new HDKey({
    versions: test ? VERSIONS['tpub']! : VERSIONS['xpub']!,
    depth: account.depth,
    index: account.index,
    parentFingerprint: account.parentFingerprint,
    chainCode: account.chainCode!,
    publicKey: account.publicKey!,
  }).publicExtendedKey;
}

const hash160 = (bytes: Uint8Array) => ripemd160(sha256(bytes));

/** The address of a compressed secp256k1 public key on `network`. */
export function addressOfPublicKey(network: HdNetwork, publicKey: Uint8Array, options: AddressOptions = {}): string {
  switch (network) {
    case 'bitcoin':
      return encodeAddress('btc', hash160(publicKey), options);
    case 'litecoin':
      return encodeAddress('ltc', hash160(publicKey), options);
    case 'bitcoin-cash':
      return encodeAddress('bch', hash160(publicKey), options);
    case 'ethereum':
    case 'bsc':
    case 'tron': {
      // The last 20 bytes of keccak-256 of the uncompressed key without its 0x04 prefix.
      const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
      const account = keccak_256(uncompressed.subarray(1)).subarray(12);
      return encodeAddress(network === 'tron' ? 'tron' : 'evm', account, options);
    }
  }
}

/** The receiving address at `index` of an account: <account>/0/<index>. */
export function deriveAddress(account: HDKey, network: HdNetwork, index: number, options: AddressOptions = {}): string {
  return deriveChainAddress(account, network, 0, index, options);
}

/**
 * The address of <account>/<chain>/<index>: chain 0 receives, chain 1 is the service's own (the hot wallet), which
 * watchers derive from the public key as well (no signer needed to watch it).
 */
export function deriveChainAddress(account: HDKey, network: HdNetwork, chain: 0 | 1, index: number, options: AddressOptions = {}): string {
  const child = account.deriveChild(chain).deriveChild(index);
  return addressOfPublicKey(network, child.publicKey!, options);
}
