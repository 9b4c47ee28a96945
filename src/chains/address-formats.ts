import { base58, base64, bech32, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { Network } from '../domain/assets.ts';

export type AddressNetwork = 'btc' | 'ltc' | 'bch' | 'evm' | 'tron' | 'sol' | 'ton';

/** The address codec of each network. */
export const ADDRESS_FORMAT: Record<Network, AddressNetwork> = {
  bitcoin: 'btc',
  litecoin: 'ltc',
  'bitcoin-cash': 'bch',
  ethereum: 'evm',
  bsc: 'evm',
  tron: 'tron',
  solana: 'sol',
  ton: 'ton',
};

export interface AddressOptions {
  testnet?: boolean;
  /** A local regtest chain (its own bech32 and CashAddr prefixes); implies testnet elsewhere. */
  regtest?: boolean;
}

type Flavour = 'main' | 'test' | 'regtest';
const flavourOf = (opts: AddressOptions): Flavour => (opts.regtest ? 'regtest' : opts.testnet ? 'test' : 'main');

// Address payload size per network: hash160 / account hash vs. 32-byte key / account id.
const BYTE_LENGTH: Record<AddressNetwork, number> = {
  btc: 20,
  ltc: 20,
  bch: 20,
  evm: 20,
  tron: 20,
  sol: 32,
  ton: 32,
};

const SEGWIT_HRP = {
  btc: { main: 'bc', test: 'tb', regtest: 'bcrt' },
  ltc: { main: 'ltc', test: 'tltc', regtest: 'rltc' },
} as const;

const TRON_PREFIX = 0x41;
const base58check = createBase58check(sha256);

export function encodeAddress(network: AddressNetwork, bytes: Uint8Array, opts: AddressOptions = {}): string {
  const expected = BYTE_LENGTH[network];
  if (expected === undefined) throw new Error(`unknown address network: ${String(network)}`);
  if (!(bytes instanceof Uint8Array) || bytes.length !== expected) {
    throw new Error(`${network} address needs ${expected} bytes, got ${bytes?.length}`);
  }
  const flavour = flavourOf(opts);
  const testnet = flavour !== 'main';
  switch (network) {
    case 'btc':
    case 'ltc':
      return encodeP2wpkh(SEGWIT_HRP[network][flavour], bytes);
    case 'bch':
      return encodeCashAddr(cashAddrPrefix(flavour), bytes);
    case 'evm':
      return toChecksumAddress(hex(bytes));
    case 'tron':
      return base58check.encode(concat(Uint8Array.of(TRON_PREFIX), bytes));
    case 'sol':
      return base58.encode(bytes);
    case 'ton':
      return encodeTon(bytes, testnet);
  }
}

/** True iff `address` is well-formed for `network` (and its mainnet/testnet flavour) with a valid checksum. */
export function validateAddress(network: AddressNetwork, address: string, opts: AddressOptions = {}): boolean {
  if (typeof address !== 'string') return false;
  const flavour = flavourOf(opts);
  const testnet = flavour !== 'main';
  try {
    switch (network) {
      case 'btc':
      case 'ltc':
        return decodeP2wpkh(SEGWIT_HRP[network][flavour], address) !== undefined;
      case 'bch':
        return decodeCashAddr(cashAddrPrefix(flavour), address) !== undefined;
      case 'evm':
        return isEvmAddress(address);
      case 'tron': {
        const payload = base58check.decode(address);
        return payload.length === 21 && payload[0] === TRON_PREFIX;
      }
      case 'sol':
        // Solana has no checksum: only the length of the decoded key can be checked.
        return address.length >= 32 && address.length <= 44 && base58.decode(address).length === 32;
      case 'ton':
        return decodeTon(address, testnet) !== undefined;
      default:
        return false;
    }
  } catch {
    return false;
  }
}

/** The 20 account bytes of a Tron address (base58check, 0x41 prefix); throws when it is not one. */
export function tronAccountBytes(address: string): Uint8Array {
  const payload = base58check.decode(address);
  if (payload.length !== 21 || payload[0] !== TRON_PREFIX) throw new Error(`not a Tron address: ${address}`);
  return payload.subarray(1);
}

/**
 * The account a TON address names, as `workchain:hex` (the raw form): friendly forms of one account differ in their
 * flags (bounceable or not, test-only) and alphabet, so addresses are compared by this. Null when it is neither a
 * friendly address with a valid checksum (either network) nor a raw one.
 */
export function tonAccountId(address: string): string | null {
  const raw = /^(0|-1):([0-9a-fA-F]{64})$/.exec(address);
  if (raw) return `${raw[1]}:${raw[2]!.toLowerCase()}`;
  for (const testnet of [false, true]) {
    const hash = decodeTon(address, testnet);
    if (hash) {
      const workchain = base64.decode(address.replace(/-/g, '+').replace(/_/g, '/'))[1] === TON_MASTERCHAIN ? -1 : 0;
      return `${workchain}:${hex(hash)}`;
    }
  }
  return null;
}

// --- bech32 segwit (BIP-173), v0 P2WPKH only ---

function encodeP2wpkh(hrp: string, program: Uint8Array): string {
  return bech32.encode(hrp, [0, ...bech32.toWords(program)]);
}

function decodeP2wpkh(hrp: string, address: string): Uint8Array | undefined {
  const decoded = bech32.decodeUnsafe(address);
  if (!decoded || decoded.prefix !== hrp) return undefined;
  const [version, ...words] = decoded.words;
  // v1+ must use bech32m (BIP-350), and only 20-byte v0 programs are P2WPKH.
  if (version !== 0) return undefined;
  const program = bech32.fromWordsUnsafe(words);
  return program && program.length === 20 ? program : undefined;
}

// --- CashAddr (Bitcoin Cash), P2PKH with 160-bit hash ---

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const CASHADDR_GENERATORS = [0x98f2bc8e61n, 0x79b76d99e2n, 0xf33e5fb3c4n, 0xae2eabe2a8n, 0x1e4f43e470n];
// Version byte: type 0 (P2PKH) in bits 3..6, size code 0 (160-bit hash) in bits 0..2.
const CASHADDR_P2PKH_VERSION = 0;

function cashAddrPrefix(flavour: Flavour): string {
  return { main: 'bitcoincash', test: 'bchtest', regtest: 'bchreg' }[flavour];
}

// 40-bit BCH code; BigInt because JS bitwise operators truncate to 32 bits.
function cashAddrPolymod(values: number[]): bigint {
  let c = 1n;
  for (const value of values) {
    const top = c >> 35n;
    c = ((c & 0x07ffffffffn) << 5n) ^ BigInt(value);
    CASHADDR_GENERATORS.forEach((g, i) => {
      if ((top >> BigInt(i)) & 1n) c ^= g;
    });
  }
  return c ^ 1n;
}

function cashAddrPrefixWords(prefix: string): number[] {
  return [...prefix].map((ch) => ch.charCodeAt(0) & 0x1f).concat(0);
}

function encodeCashAddr(prefix: string, hash160: Uint8Array): string {
  const payload = bech32.toWords(concat(Uint8Array.of(CASHADDR_P2PKH_VERSION), hash160));
  const mod = cashAddrPolymod([...cashAddrPrefixWords(prefix), ...payload, 0, 0, 0, 0, 0, 0, 0, 0]);
  const checksum = Array.from({ length: 8 }, (_, i) => Number((mod >> BigInt(5 * (7 - i))) & 0x1fn));
  return `${prefix}:${[...payload, ...checksum].map((w) => CHARSET.charAt(w)).join('')}`;
}

function decodeCashAddr(expectedPrefix: string, address: string): Uint8Array | undefined {
  // Like bech32, either case is valid but mixing cases is not.
  const lower = address.toLowerCase();
  if (address !== lower && address !== address.toUpperCase()) return undefined;
  const sep = lower.lastIndexOf(':');
  // The prefix may be omitted; the checksum still commits to the expected one.
  if (sep !== -1 && lower.slice(0, sep) !== expectedPrefix) return undefined;
  const body = lower.slice(sep + 1);
  if (body.length !== 42) return undefined; // 34 payload words + 8 checksum words for a 160-bit hash
  const words = [...body].map((ch) => CHARSET.indexOf(ch));
  if (words.some((w) => w < 0)) return undefined;
  if (cashAddrPolymod([...cashAddrPrefixWords(expectedPrefix), ...words]) !== 0n) return undefined;
  const payload = bech32.fromWordsUnsafe(words.slice(0, -8));
  if (!payload || payload.length !== 21 || payload[0] !== CASHADDR_P2PKH_VERSION) return undefined;
  return payload.subarray(1);
}

// --- EVM (EIP-55) ---

function toChecksumAddress(lowerHex: string): string {
  const hash = keccak_256(new TextEncoder().encode(lowerHex));
  // Each hex digit is upper-cased when the matching nibble of the hash is >= 8.
  const digits = [...lowerHex].map((ch, i) => {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    return nibble >= 8 ? ch.toUpperCase() : ch;
  });
  return `0x${digits.join('')}`;
}

function isEvmAddress(address: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return false;
  const body = address.slice(2);
  // Single-case addresses carry no checksum (EIP-55 is opt-in), so they are accepted as-is.
  if (body === body.toLowerCase() || body === body.toUpperCase()) return true;
  return toChecksumAddress(body.toLowerCase()) === address;
}

// --- TON user-friendly address ---

const TON_BOUNCEABLE = 0x11;
const TON_NON_BOUNCEABLE = 0x51;
const TON_TESTNET_FLAG = 0x80;
const TON_BASECHAIN = 0x00;
const TON_MASTERCHAIN = 0xff; // workchain -1 as int8

function crc16Xmodem(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

function encodeTon(hash: Uint8Array, testnet: boolean): string {
  const tag = TON_BOUNCEABLE | (testnet ? TON_TESTNET_FLAG : 0);
  const body = concat(Uint8Array.of(tag, TON_BASECHAIN), hash);
  const crc = crc16Xmodem(body);
  return toBase64Url(concat(body, Uint8Array.of(crc >> 8, crc & 0xff)));
}

function decodeTon(address: string, testnet: boolean): Uint8Array | undefined {
  // Friendly addresses come in url-safe or standard base64, never a mix of both alphabets.
  if (!/^[A-Za-z0-9_-]{48}$/.test(address) && !/^[A-Za-z0-9+/]{48}$/.test(address)) return undefined;
  const bytes = base64.decode(address.replace(/-/g, '+').replace(/_/g, '/'));
  if (bytes.length !== 36) return undefined;
  const tag = bytes[0]!;
  if (Boolean(tag & TON_TESTNET_FLAG) !== testnet) return undefined;
  const kind = tag & ~TON_TESTNET_FLAG;
  if (kind !== TON_BOUNCEABLE && kind !== TON_NON_BOUNCEABLE) return undefined;
  if (bytes[1] !== TON_BASECHAIN && bytes[1] !== TON_MASTERCHAIN) return undefined;
  const crc = crc16Xmodem(bytes.subarray(0, 34));
  if (bytes[34] !== crc >> 8 || bytes[35] !== (crc & 0xff)) return undefined;
  return bytes.subarray(2, 34);
}

// --- helpers ---

function toBase64Url(bytes: Uint8Array): string {
  return base64.encode(bytes).replace(/\+/g, '-').replace(/\//g, '_');
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
