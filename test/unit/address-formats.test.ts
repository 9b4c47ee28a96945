import { describe, it, expect } from 'vitest';
import { encodeCashAddress } from '@bitauth/libauth/build/lib/address/cash-address.js';
import { base58, base64url, bech32, bech32m, createBase58check, hex } from '@scure/base';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { encodeAddress, validateAddress, type AddressNetwork } from '../../src/chains/address-formats.ts';

// Vectors come from the specs (BIP-173, BIP-350, BIP-86, EIP-55, CashAddr, CashTokens), from well-known on-chain
// addresses, from litecoind 0.21 regtest (getnewaddress, validateaddress), or — where no published vector exists
// (ltc, bchtest, TON variants) — from a separate stdlib-only Python reference (hashlib, binascii.crc_hqx, hand-written
// bech32/cashaddr polymod) or @scure/base's primitives with the spec's version bytes, never from the encoder under test.

const NETWORKS: AddressNetwork[] = ['btc', 'ltc', 'bch', 'evm', 'tron', 'sol', 'ton'];
const SIZE: Record<AddressNetwork, number> = { btc: 20, ltc: 20, bch: 20, evm: 20, tron: 20, sol: 32, ton: 32 };
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

// Seeded so corruption results are reproducible rather than flaky.
function prng(seed: number): (n: number) => Uint8Array {
  let s = seed >>> 0;
  return (n) =>
    Uint8Array.from({ length: n }, () => {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      return (s >>> 0) & 0xff;
    });
}

// Decodes with library primitives only, so round-trips are checked against something other than the module.
function decodeIndependently(network: AddressNetwork, address: string): Uint8Array {
  switch (network) {
    case 'btc':
    case 'ltc': {
      const { words } = bech32.decode(address as `${string}1${string}`);
      expect(words[0]).toBe(0);
      return bech32.fromWords(words.slice(1));
    }
    case 'bch': {
      const body = address.slice(address.indexOf(':') + 1);
      const payload = bech32.fromWords([...body.slice(0, -8)].map((c) => CHARSET.indexOf(c)));
      expect(payload[0]).toBe(0);
      return payload.slice(1);
    }
    case 'evm':
      return hex.decode(address.slice(2).toLowerCase());
    case 'tron': {
      const payload = createBase58check(sha256).decode(address);
      expect(payload[0]).toBe(0x41);
      return payload.slice(1);
    }
    case 'sol':
      return base58.decode(address);
    case 'ton':
      return base64url.decode(address).slice(2, 34);
  }
}

function replaceAt(s: string, i: number, ch: string): string {
  return s.slice(0, i) + ch + s.slice(i + 1);
}

/** A base58check address: the version byte, then the hash. */
const legacy = (version: number, hash: Uint8Array) => createBase58check(sha256).encode(Uint8Array.of(version, ...hash));
/** BIP-350's taproot vector's key (the generator's x): a valid x-only key. */
const TAPROOT_KEY = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';

// A different character from the same alphabet, so only the checksum can catch the change.
function substitute(network: AddressNetwork, ch: string): string {
  const next = (alphabet: string) => alphabet[(alphabet.indexOf(ch) + 1) % alphabet.length]!;
  switch (network) {
    case 'btc':
    case 'ltc':
    case 'bch':
      return next(CHARSET);
    case 'evm':
      return /[a-f]/.test(ch) ? ch.toUpperCase() : /[A-F]/.test(ch) ? ch.toLowerCase() : next('0123456789');
    case 'tron':
    case 'sol':
      return next(B58);
    case 'ton':
      return next(B64URL);
  }
}

// Characters before this index are a fixed prefix (hrp + separator, "bitcoincash:", "0x").
function bodyStart(address: string): number {
  if (address.startsWith('0x')) return 2;
  const colon = address.indexOf(':');
  if (colon !== -1) return colon + 1;
  const one = address.lastIndexOf('1');
  return /^(bc|tb|ltc|tltc)1/.test(address) ? one + 1 : 0;
}

describe('btc (P2PKH, P2SH, P2WPKH, P2WSH, P2TR)', () => {
  const h160 = hex.decode('751e76e8199196d454941c45d1b3a323f1433bd6');

  it('encodes the BIP-173 mainnet and testnet vectors', () => {
    expect(encodeAddress('btc', h160)).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    expect(encodeAddress('btc', h160, { testnet: true })).toBe('tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx');
  });

  it('validates spec vectors, including the all-uppercase form', () => {
    expect(validateAddress('btc', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toBe(true);
    expect(validateAddress('btc', 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4')).toBe(true);
    expect(validateAddress('btc', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', { testnet: true })).toBe(true);
  });

  it('accepts every standard output type: P2PKH, P2SH, P2WPKH, P2WSH, P2TR', () => {
    for (const address of [
      '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu', // P2PKH
      '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', // P2SH
      'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', // P2WSH, BIP-173
      'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', // P2TR, BIP-350
      'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr', // P2TR, BIP-86's first receiving address
    ]) {
      expect(validateAddress('btc', address), address).toBe(true);
    }
    for (const address of [
      'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', // P2WSH, BIP-173
      'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', // P2TR, BIP-350
      legacy(0x6f, h160), // m/n P2PKH
      legacy(0xc4, h160), // 2 P2SH
    ]) {
      expect(validateAddress('btc', address, { testnet: true }), address).toBe(true);
      // Regtest shares testnet's base58 versions but has its own bech32 prefix.
      expect(validateAddress('btc', address, { regtest: true }), address).toBe(!address.startsWith('tb1'));
    }
    expect(validateAddress('btc', bech32m.encode('bcrt', [1, ...bech32m.toWords(hex.decode(TAPROOT_KEY))]), { regtest: true })).toBe(true);
  });

  it('rejects mixed case, the wrong network, the wrong checksum kind and outputs anyone could spend', () => {
    expect(validateAddress('btc', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3T4')).toBe(false);
    expect(validateAddress('btc', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx')).toBe(false);
    expect(validateAddress('btc', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', { testnet: true })).toBe(false);
    expect(validateAddress('btc', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu', { testnet: true })).toBe(false);
    expect(validateAddress('btc', legacy(0x6f, h160))).toBe(false);
    // BIP-350's invalid vectors: v1+ with a bech32 checksum, v0 with a bech32m one.
    expect(validateAddress('btc', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd')).toBe(false);
    expect(validateAddress('btc', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh')).toBe(false);
    expect(validateAddress('btc', bech32.encode('bc', [1, ...bech32.toWords(h160)]))).toBe(false);
    // Witness versions and lengths without a meaning yet (BIP-350 valid vectors), and P2A: anyone can spend them.
    expect(validateAddress('btc', 'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y')).toBe(false);
    expect(validateAddress('btc', 'BC1SW50QGDZ25J')).toBe(false);
    expect(validateAddress('btc', 'bc1pfeessrawgf')).toBe(false);
    // A Taproot key that is no point of the curve: an output to it could never be spent.
    expect(validateAddress('btc', bech32m.encode('bc', [1, ...bech32m.toWords(new Uint8Array(32).fill(0xff))]))).toBe(false);
    // Litecoin's and Bitcoin Cash's own forms.
    expect(validateAddress('btc', 'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9')).toBe(false);
    expect(validateAddress('btc', legacy(0x30, h160))).toBe(false);
    expect(validateAddress('btc', 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a')).toBe(false);
  });
});

describe('ltc (L, M, ltc1q, ltc1p)', () => {
  const h160 = hex.decode('751e76e8199196d454941c45d1b3a323f1433bd6');

  it('encodes with the ltc / tltc hrp (vectors from the Python reference)', () => {
    expect(encodeAddress('ltc', h160)).toBe('ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9');
    expect(encodeAddress('ltc', h160, { testnet: true })).toBe('tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0');
  });

  it('accepts every standard output type on main: L (P2PKH), M (P2SH), ltc1q (P2WPKH, P2WSH), ltc1p (P2TR)', () => {
    for (const address of [
      legacy(0x30, h160),
      legacy(0x32, h160),
      'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9',
      bech32.encode('ltc', [0, ...bech32.toWords(new Uint8Array(32).fill(9))]),
      bech32m.encode('ltc', [1, ...bech32m.toWords(hex.decode(TAPROOT_KEY))]),
    ]) {
      expect(address).toMatch(/^(L|M|ltc1q|ltc1p)/);
      expect(validateAddress('ltc', address), address).toBe(true);
    }
  });

  it('accepts what litecoind 0.21 regtest hands out and validates (legacy, p2sh-segwit, bech32, a Taproot output)', () => {
    for (const address of [
      'mzwB7wBk1NBYApmSkVkqcAhxnD9WwjUmtm',
      'QTBnTudtaQF9J2JdYcKgkQNrjH5pzGE4HM',
      'rltc1q0qnjg78j5gy8x2q35vm0p6vu56gzch3xpjle6w',
      'rltc1pmfr3p9j00pfxjh0zmgp99y8zftmd3s5pmedqhyptwy6lm87hf5ssny9wka',
    ]) {
      expect(validateAddress('ltc', address, { regtest: true }), address).toBe(true);
      expect(validateAddress('ltc', address), address).toBe(false);
    }
    expect(validateAddress('ltc', legacy(0x3a, h160), { testnet: true })).toBe(true);
  });

  it('refuses Bitcoin addresses, the old 3/2 P2SH versions among them (litecoind still reads them)', () => {
    expect(validateAddress('ltc', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toBe(false);
    expect(validateAddress('ltc', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu')).toBe(false);
    expect(validateAddress('ltc', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy')).toBe(false);
    // litecoind regtest accepted this one as QMF9FvAuZHvq9URopaBNakHGU5NgotERLV (the same script).
    expect(validateAddress('ltc', '2MstP8uJfYBsk1HfmCU9MW3qqKgvrw3ESd1', { regtest: true })).toBe(false);
    expect(validateAddress('ltc', 'QMF9FvAuZHvq9URopaBNakHGU5NgotERLV', { regtest: true })).toBe(true);
    // An MWEB stealth address is no output script our transactions can pay.
    expect(validateAddress('ltc', `ltcmweb1${'q'.repeat(100)}`)).toBe(false);
  });
});

describe('bch (CashAddr and legacy)', () => {
  // Spec vector; same hash160 as legacy 1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu.
  const h160 = hex.decode('76a04053bda0a88bda5177b86a15c3b29f559873');
  const main = 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a';
  const test = 'bchtest:qpm2qsznhks23z7629mms6s4cwef74vcwvqcw003ap';

  it('encodes the spec vectors', () => {
    expect(encodeAddress('bch', h160)).toBe(main);
    expect(encodeAddress('bch', h160, { testnet: true })).toBe(test);
  });

  it('validates with or without prefix and in either single case', () => {
    expect(validateAddress('bch', main)).toBe(true);
    expect(validateAddress('bch', main.slice('bitcoincash:'.length))).toBe(true);
    expect(validateAddress('bch', main.toUpperCase())).toBe(true);
    expect(validateAddress('bch', test, { testnet: true })).toBe(true);
    expect(validateAddress('bch', test.slice('bchtest:'.length), { testnet: true })).toBe(true);
  });

  it('accepts P2SH, P2SH32, token-aware CashAddr and legacy base58 (the spec’s conversion table)', () => {
    for (const address of [
      'bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq', // P2SH of 3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC
      'bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy',
      'bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e',
      'bitcoincash:zpm2qsznhks23z7629mms6s4cwef74vcwvrqekrq9w', // token-aware P2PKH (CashTokens' vector)
      encodeCashAddress({ prefix: 'bitcoincash', type: 'p2sh', payload: new Uint8Array(32).fill(1) }).address, // P2SH32
      '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu',
      '3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC',
    ]) {
      expect(validateAddress('bch', address), address).toBe(true);
    }
    expect(validateAddress('bch', 'bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t', { testnet: true })).toBe(true);
    expect(validateAddress('bch', legacy(0x6f, h160), { testnet: true })).toBe(true);
    expect(validateAddress('bch', legacy(0xc4, h160), { regtest: true })).toBe(true);
    expect(validateAddress('bch', encodeCashAddress({ prefix: 'bchreg', type: 'p2pkh', payload: h160 }).address, { regtest: true })).toBe(true);
  });

  it('rejects mixed case, a prefix the checksum was not made for, non-standard hash sizes and segwit', () => {
    expect(validateAddress('bch', replaceAt(main, main.length - 1, 'A'))).toBe(false);
    expect(validateAddress('bch', test)).toBe(false);
    expect(validateAddress('bch', `bchtest:${main.slice('bitcoincash:'.length)}`, { testnet: true })).toBe(false);
    expect(validateAddress('bch', main.slice('bitcoincash:'.length), { testnet: true })).toBe(false);
    expect(validateAddress('bch', legacy(0x6f, h160))).toBe(false);
    expect(validateAddress('bch', encodeCashAddress({ prefix: 'bitcoincash', type: 'p2pkh', payload: new Uint8Array(32).fill(1) }).address)).toBe(false);
    expect(validateAddress('bch', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toBe(false);
    expect(validateAddress('bch', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0')).toBe(false);
  });
});

describe('evm (EIP-55)', () => {
  const mixed = [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ];
  // EIP-55 vectors whose checksum happens to be single-case.
  const singleCase = [
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
  ];

  it('encodes the EIP-55 vectors', () => {
    for (const address of [...mixed, ...singleCase]) {
      expect(encodeAddress('evm', hex.decode(address.slice(2).toLowerCase()))).toBe(address);
    }
  });

  it('accepts checksummed and all-lowercase addresses', () => {
    for (const address of [...mixed, ...singleCase]) {
      expect(validateAddress('evm', address)).toBe(true);
      expect(validateAddress('evm', address.toLowerCase())).toBe(true);
    }
  });

  it('rejects wrong mixed case and malformed input', () => {
    expect(validateAddress('evm', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(false);
    expect(validateAddress('evm', '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBe(false);
    expect(validateAddress('evm', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBe(false);
    expect(validateAddress('evm', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe')).toBe(false);
    expect(validateAddress('evm', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg')).toBe(false);
  });
});

describe('tron (base58check, 0x41 prefix)', () => {
  const usdt = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  const usdtHash = 'a614f803b6fd780986a42c78ec9c7f77e6ded13c';

  it('validates the USDT contract address and round-trips it', () => {
    expect(validateAddress('tron', usdt)).toBe(true);
    const decoded = decodeIndependently('tron', usdt);
    expect(hex.encode(decoded)).toBe(usdtHash);
    expect(encodeAddress('tron', decoded)).toBe(usdt);
  });

  it('encodes the zero account as the well-known T9yD14… address', () => {
    expect(encodeAddress('tron', new Uint8Array(20))).toBe('T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb');
  });

  it('rejects a valid base58check payload with a non-TRON version byte', () => {
    expect(validateAddress('tron', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu')).toBe(false);
  });
});

describe('sol (base58 ed25519 key)', () => {
  it('encodes well-known program ids', () => {
    expect(encodeAddress('sol', new Uint8Array(32))).toBe('11111111111111111111111111111111');
    const tokenProgram = hex.decode('06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9');
    expect(encodeAddress('sol', tokenProgram)).toBe('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    expect(validateAddress('sol', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA')).toBe(true);
  });

  it('rejects keys that do not decode to exactly 32 bytes or use non-base58 characters', () => {
    expect(validateAddress('sol', base58.encode(new Uint8Array(31).fill(7)))).toBe(false);
    expect(validateAddress('sol', base58.encode(new Uint8Array(33).fill(7)))).toBe(false);
    expect(validateAddress('sol', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D0')).toBe(false);
  });
});

describe('ton (user-friendly address)', () => {
  const bounceable = 'EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2';
  const hash = hex.decode('ed1691307050047117b998b561d8de82d31fbf84910ced6eb5fc92e7485ef8a7');

  it('encodes and validates the bounceable mainnet form', () => {
    expect(encodeAddress('ton', hash)).toBe(bounceable);
    expect(validateAddress('ton', bounceable)).toBe(true);
    expect(encodeAddress('ton', new Uint8Array(32))).toBe('EQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAM9c');
  });

  it('accepts the non-bounceable and standard-base64 forms of the same account', () => {
    expect(validateAddress('ton', 'UQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p9dz')).toBe(true);
    expect(validateAddress('ton', 'EQDtFpEwcFAEcRe5mLVh2N6C0x+/hJEM7W61/JLnSF74p4q2')).toBe(true);
    expect(validateAddress('ton', 'EQDtFpEwcFAEcRe5mLVh2N6C0x-/hJEM7W61_JLnSF74p4q2')).toBe(false);
  });

  it('sets the testnet flag (0x80) and checks it on validation', () => {
    const testnet = 'kQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74pzE8';
    expect(encodeAddress('ton', hash, { testnet: true })).toBe(testnet);
    expect(validateAddress('ton', testnet, { testnet: true })).toBe(true);
    expect(validateAddress('ton', testnet)).toBe(false);
    expect(validateAddress('ton', bounceable, { testnet: true })).toBe(false);
  });

  it('rejects a one-character corruption and the raw form', () => {
    expect(validateAddress('ton', 'EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q3')).toBe(false);
    expect(validateAddress('ton', 'EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF75p4q2')).toBe(false);
    expect(validateAddress('ton', '0:ed1691307050047117b998b561d8de82d31fbf84910ced6eb5fc92e7485ef8a7')).toBe(false);
  });
});

describe.each(NETWORKS)('%s: generic properties', (network) => {
  const random = prng(0x9e3779b9 ^ NETWORKS.indexOf(network));
  const samples = [
    new Uint8Array(SIZE[network]),
    new Uint8Array(SIZE[network]).fill(0xff),
    ...Array.from({ length: 50 }, () => random(SIZE[network])),
  ];

  it('round-trips bytes through encode, validate and an independent decode', () => {
    for (const testnet of [false, true]) {
      for (const bytes of samples) {
        const address = encodeAddress(network, bytes, { testnet });
        expect(validateAddress(network, address, { testnet })).toBe(true);
        expect(hex.encode(decodeIndependently(network, address))).toBe(hex.encode(bytes));
      }
    }
  });

  it('rejects wrong-sized input to the encoder', () => {
    expect(() => encodeAddress(network, new Uint8Array(SIZE[network] - 1))).toThrow();
    expect(() => encodeAddress(network, new Uint8Array(SIZE[network] + 1))).toThrow();
  });

  it('never throws on garbage', () => {
    const garbage: unknown[] = ['', ' ', '1', '0x', ':', 'bitcoincash:', 'bc1', 'é'.repeat(48), 'x'.repeat(500), null, 42];
    for (const input of garbage) {
      expect(validateAddress(network, input as string)).toBe(false);
    }
  });

  if (network === 'sol') {
    it('cannot detect a changed character: Solana addresses carry no checksum', () => {
      for (const bytes of samples.slice(2, 12)) {
        const address = encodeAddress(network, bytes);
        const mid = address.length >> 1;
        const corrupted = replaceAt(address, mid, substitute(network, address[mid]!));
        expect(validateAddress(network, corrupted)).toBe(true);
        expect(hex.encode(base58.decode(corrupted))).not.toBe(hex.encode(bytes));
      }
    });
  } else {
    it('rejects every single-character substitution', () => {
      for (const bytes of samples.slice(0, 12)) {
        const address = encodeAddress(network, bytes);
        // A letter-free EVM address (e.g. all zeros) is single-case, so EIP-55 has nothing to check.
        if (network === 'evm' && !(/[a-f]/.test(address) && /[A-F]/.test(address))) continue;
        for (let i = bodyStart(address); i < address.length; i++) {
          const corrupted = replaceAt(address, i, substitute(network, address[i]!));
          expect(validateAddress(network, corrupted), `${address} -> ${corrupted}`).toBe(false);
        }
      }
    });
  }
});

// Every standard output type of each UTXO network on each of its chains, built from the specs' version bytes and
// prefixes (not the module's table): valid, and refused after any one-character substitution.
describe('UTXO address types: generic properties', () => {
  type Flavour = 'main' | 'test' | 'regtest';
  const OPTIONS: Record<Flavour, { testnet?: boolean; regtest?: boolean }> = { main: {}, test: { testnet: true }, regtest: { regtest: true } };
  const segwit = (hrp: string, version: number, program: Uint8Array) =>
    version === 0 ? bech32.encode(hrp, [0, ...bech32.toWords(program)]) : bech32m.encode(hrp, [version, ...bech32m.toWords(program)]);
  const cashAddr = (prefix: 'bitcoincash' | 'bchtest' | 'bchreg', type: 'p2pkh' | 'p2sh' | 'p2pkhWithTokens' | 'p2shWithTokens', payload: Uint8Array) =>
    encodeCashAddress({ prefix, type, payload }).address;
  /** A valid x-only key: Taproot outputs to other 32-byte strings are refused. */
  const xOnly = (seed: Uint8Array) => schnorr.getPublicKey(sha256(seed));
  type Build = (bytes: (n: number) => Uint8Array) => string;
  const typesOf = (versions: { pkh: number; sh: number; hrp: string }): Record<string, Build> => ({
    P2PKH: (r) => legacy(versions.pkh, r(20)),
    P2SH: (r) => legacy(versions.sh, r(20)),
    P2WPKH: (r) => segwit(versions.hrp, 0, r(20)),
    P2WSH: (r) => segwit(versions.hrp, 0, r(32)),
    P2TR: (r) => segwit(versions.hrp, 1, xOnly(r(32))),
  });
  const bchTypes = (prefix: 'bitcoincash' | 'bchtest' | 'bchreg', versions: { pkh: number; sh: number }): Record<string, Build> => ({
    'CashAddr P2PKH': (r) => cashAddr(prefix, 'p2pkh', r(20)),
    'CashAddr P2SH': (r) => cashAddr(prefix, 'p2sh', r(20)),
    'CashAddr P2SH32': (r) => cashAddr(prefix, 'p2sh', r(32)),
    'CashAddr token-aware P2PKH': (r) => cashAddr(prefix, 'p2pkhWithTokens', r(20)),
    'CashAddr token-aware P2SH': (r) => cashAddr(prefix, 'p2shWithTokens', r(20)),
    'legacy P2PKH': (r) => legacy(versions.pkh, r(20)),
    'legacy P2SH': (r) => legacy(versions.sh, r(20)),
  });
  const CASES: Record<'btc' | 'ltc' | 'bch', Record<Flavour, Record<string, Build>>> = {
    btc: { main: typesOf({ pkh: 0x00, sh: 0x05, hrp: 'bc' }), test: typesOf({ pkh: 0x6f, sh: 0xc4, hrp: 'tb' }), regtest: typesOf({ pkh: 0x6f, sh: 0xc4, hrp: 'bcrt' }) },
    ltc: { main: typesOf({ pkh: 0x30, sh: 0x32, hrp: 'ltc' }), test: typesOf({ pkh: 0x6f, sh: 0x3a, hrp: 'tltc' }), regtest: typesOf({ pkh: 0x6f, sh: 0x3a, hrp: 'rltc' }) },
    bch: { main: bchTypes('bitcoincash', { pkh: 0x00, sh: 0x05 }), test: bchTypes('bchtest', { pkh: 0x6f, sh: 0xc4 }), regtest: bchTypes('bchreg', { pkh: 0x6f, sh: 0xc4 }) },
  };
  const rows = Object.entries(CASES).flatMap(([network, flavours]) =>
    Object.entries(flavours).flatMap(([flavour, types]) => Object.entries(types).map(([type, build]) => ({ network: network as 'btc' | 'ltc' | 'bch', flavour: flavour as Flavour, type, build }))),
  );
  // Characters before this index are a fixed prefix (hrp and separator, "bitcoincash:").
  const start = (address: string) => (address.includes(':') ? address.indexOf(':') + 1 : /^[a-z]+1/.test(address) ? address.lastIndexOf('1') + 1 : 0);

  it.each(rows.map((r) => [`${r.network} ${r.flavour} ${r.type}`, r] as const))('%s: valid on its chain only, and every substitution refused', (_, { network, flavour, type, build }) => {
    const random = prng(0x5bd1e995 ^ rows.findIndex((r) => r.network === network && r.flavour === flavour && r.type === type));
    for (let sample = 0; sample < 8; sample++) {
      const address = build(random);
      expect(validateAddress(network, address, OPTIONS[flavour]), address).toBe(true);
      // Test networks share base58 versions; everything else belongs to one chain.
      if (flavour === 'main') expect(validateAddress(network, address, OPTIONS.test), address).toBe(false);
      if (flavour !== 'main') expect(validateAddress(network, address), address).toBe(false);
      const alphabet = start(address) > 0 ? CHARSET : B58;
      for (let i = start(address); i < address.length; i++) {
        const ch = address[i]!;
        const corrupted = replaceAt(address, i, alphabet[(alphabet.indexOf(ch) + 1) % alphabet.length]!);
        expect(validateAddress(network, corrupted), `${address} -> ${corrupted}`).toBe(false);
        expect(validateAddress(network, corrupted, OPTIONS[flavour]), `${address} -> ${corrupted}`).toBe(false);
      }
    }
  });
});
