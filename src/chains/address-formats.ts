import { decodeCashAddress, encodeCashAddress } from '@bitauth/libauth/build/lib/address/cash-address.js';
import { base58, base64, createBase58check } from '@scure/base';
import { Address, OutScript } from '@scure/btc-signer';
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

/** How @scure/btc-signer reads and writes a network's addresses: bech32 prefix, base58 version bytes, WIF. */
export interface BitcoinStyleParams {
  bech32: string;
  pubKeyHash: number;
  scriptHash: number;
  wif: number;
}

const BITCOIN_TEST = { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };
// Litecoin writes P2SH as M (0x32) / Q (0x3a) since 2017. The older 3 (0x05) / 2 (0xc4), which Litecoin Core still
// reads, are refused: such an address is far more likely a Bitcoin address pasted by mistake (docs/chains-utxo.md).
const LITECOIN_TEST = { bech32: 'tltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef };
// Bitcoin Cash's legacy base58 addresses are Bitcoin's byte for byte; it has no bech32 ('' turns that branch off).
const BITCOIN_CASH_LEGACY = { main: { bech32: '', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 }, test: { ...BITCOIN_TEST, bech32: '' } };

export const UTXO_ADDRESS_PARAMS: Record<'btc' | 'ltc' | 'bch', Record<Flavour, BitcoinStyleParams>> = {
  btc: { main: { bech32: 'bc', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 }, test: BITCOIN_TEST, regtest: { ...BITCOIN_TEST, bech32: 'bcrt' } },
  ltc: { main: { bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 }, test: LITECOIN_TEST, regtest: { ...LITECOIN_TEST, bech32: 'rltc' } },
  bch: { main: BITCOIN_CASH_LEGACY.main, test: BITCOIN_CASH_LEGACY.test, regtest: BITCOIN_CASH_LEGACY.test },
};

/**
 * The outputs an address may name for us to pay: P2PKH, P2SH, P2WPKH, P2WSH, P2TR. Not P2A (anyone can spend it) nor
 * witness versions without a meaning yet (anyone can spend them until a soft fork gives them one).
 */
const PAYABLE_OUTPUTS = new Set(['pkh', 'sh', 'wpkh', 'wsh', 'tr']);

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
      return Address(UTXO_ADDRESS_PARAMS[network][flavour]).encode({ type: 'wpkh', hash: bytes });
    case 'bch':
      return encodeCashAddress({ prefix: CASHADDR_PREFIX[flavour], type: 'p2pkh', payload: bytes }).address;
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
        return isPayableAddress(UTXO_ADDRESS_PARAMS[network][flavour], address);
      case 'bch':
        return isCashAddr(CASHADDR_PREFIX[flavour], address) || isPayableAddress(UTXO_ADDRESS_PARAMS.bch[flavour], address);
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

/**
 * The non-bounceable friendly form (UQ... on mainnet, 0Q... on testnet; url-safe) of a friendly TON address: what
 * TON's guidance hands out for a wallet that is not deployed, since a bounceable transfer to it comes back.
 */
export function tonNonBounceable(address: string, testnet: boolean): string {
  const hash = decodeTon(address, testnet);
  if (!hash) throw new Error(`not a TON address: ${address}`);
  const workchain = base64.decode(address.replace(/-/g, '+').replace(/_/g, '/'))[1]!;
  const body = concat(Uint8Array.of(TON_NON_BOUNCEABLE | (testnet ? TON_TESTNET_FLAG : 0), workchain), hash);
  const crc = crc16Xmodem(body);
  return toBase64Url(concat(body, Uint8Array.of(crc >> 8, crc & 0xff)));
}

// --- Bitcoin-style addresses (base58check, bech32, bech32m): @scure/btc-signer ---

/** A checksum-valid address of the network (its prefix and version bytes) naming an output we may pay. */
function isPayableAddress(params: BitcoinStyleParams, address: string): boolean {
  const decoded = Address(params).decode(address);
  if (!PAYABLE_OUTPUTS.has(decoded.type)) return false;
  // Throws for a Taproot key that is not a point of the curve: an output to it could never be spent.
  OutScript.encode(decoded);
  return true;
}

// --- CashAddr (Bitcoin Cash): @bitauth/libauth ---

const CASHADDR_PREFIX = { main: 'bitcoincash', test: 'bchtest', regtest: 'bchreg' } as const;
/** Hash sizes a standard output of each CashAddr type has: P2PKH 20, P2SH 20 or 32 (P2SH32); token-aware alike. */
const CASHADDR_HASH_SIZES: Record<string, number[]> = { p2pkh: [20], p2pkhWithTokens: [20], p2sh: [20, 32], p2shWithTokens: [20, 32] };

function isCashAddr(prefix: string, address: string): boolean {
  // Like bech32, either case is valid but mixing cases is not.
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) return false;
  // The prefix may be omitted; the checksum still commits to the expected one.
  const decoded = decodeCashAddress(address.includes(':') ? address : `${prefix}:${address}`);
  if (typeof decoded === 'string' || decoded.prefix !== prefix) return false;
  return CASHADDR_HASH_SIZES[decoded.type]?.includes(decoded.payload.length) ?? false;
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
