// Output descriptors (BIP-380) of what the node's watch-only wallet watches: the account's receiving chain
// (<account>/0/*) and its own chain (<account>/1/*, the hot wallet), as native segwit (wpkh) or, on Bitcoin Cash,
// P2PKH (pkh). Bitcoin Core wants them with their checksum; it is computed here rather than asked of the node.
import type { HDKey } from '@scure/bip32';
import { extendedPublicKey } from '../hd.ts';
import type { UtxoNetwork } from './networks.ts';

/** The output script of the addresses we derive on each network. */
export const SCRIPT_KIND: Record<UtxoNetwork, 'wpkh' | 'pkh'> = {
  bitcoin: 'wpkh',
  litecoin: 'wpkh',
  'bitcoin-cash': 'pkh',
};

/**
 * The ranged descriptor of one chain of the account. The key is written as xpub on main networks and tpub on test
 * networks whatever form CHAINS_FILE used (zpub, Ltub, ...): Bitcoin Core reads only its chain's BIP-32 version.
 */
export function chainDescriptor(network: UtxoNetwork, account: HDKey, test: boolean, chain: 0 | 1): string {
  return withChecksum(`${SCRIPT_KIND[network]}(${extendedPublicKey(account, test)}/${chain}/*)`);
}

/** One request of importmulti (legacy wallets) or importdescriptors (descriptor wallets): indexes `from..to`. */
export interface ImportRequest {
  desc: string;
  range: [number, number];
  /** "now": nothing to look for in past blocks; a UNIX time: the node rescans blocks from two hours before it. */
  timestamp: 'now' | number;
  /** Our own chain: the node treats what arrives there as change, not as incoming payments. */
  internal: boolean;
}

/** The request as the wallet kind wants it (importmulti needs `watchonly` for keys without private keys). */
export function importRequestFor(request: ImportRequest, descriptorWallet: boolean): Record<string, unknown> {
  return descriptorWallet ? { ...request, active: false } : { ...request, watchonly: true };
}

// BIP-380's checksum: a BCH code over the descriptor's characters, grouped as Bitcoin Core's descriptor.cpp does.
const INPUT_CHARSET = '0123456789()[],\'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#"\\ ';
const CHECKSUM_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0xf5dee51989n, 0xa9fdca3312n, 0x1bab10e32dn, 0x3706b1677an, 0x644d626ffdn];

// 40-bit arithmetic: BigInt, as JS bitwise operators truncate to 32 bits.
function polymod(symbols: number[]): bigint {
  let chk = 1n;
  for (const value of symbols) {
    const top = chk >> 35n;
    chk = ((chk & 0x7ffffffffn) << 5n) ^ BigInt(value);
    GENERATOR.forEach((g, i) => {
      if ((top >> BigInt(i)) & 1n) chk ^= g;
    });
  }
  return chk;
}

/** The 8-character checksum of a descriptor (without its `#...`). */
export function descriptorChecksum(descriptor: string): string {
  const symbols: number[] = [];
  let groups: number[] = [];
  for (const ch of descriptor) {
    const v = INPUT_CHARSET.indexOf(ch);
    if (v < 0) throw new Error(`a descriptor cannot contain ${JSON.stringify(ch)}`);
    symbols.push(v & 31);
    groups.push(v >> 5);
    if (groups.length === 3) {
      symbols.push(groups[0]! * 9 + groups[1]! * 3 + groups[2]!);
      groups = [];
    }
  }
  if (groups.length === 1) symbols.push(groups[0]!);
  if (groups.length === 2) symbols.push(groups[0]! * 3 + groups[1]!);
  const checksum = polymod([...symbols, 0, 0, 0, 0, 0, 0, 0, 0]) ^ 1n;
  return Array.from({ length: 8 }, (_, i) => CHECKSUM_CHARSET[Number((checksum >> BigInt(5 * (7 - i))) & 31n)]).join('');
}

export const withChecksum = (descriptor: string): string => `${descriptor}#${descriptorChecksum(descriptor)}`;
