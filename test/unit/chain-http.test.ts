// The pieces the HTTP chain adapters stand on: Tron receiving addresses (cross-checked with an independent
// derivation), exact integers in JSON answers, base units both ways, Tron's raw-transaction reader, TON accounts.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { describe, expect, it } from 'vitest';
import { encodeAddress, tonAccountId, tronAccountBytes } from '../../src/chains/address-formats.ts';
import { ACCOUNT_PATHS, deriveAddress, parseExtendedPublicKey } from '../../src/chains/hd.ts';
import { integerOf, parseJsonExactIntegers } from '../../src/chains/http.ts';
import { CONTRACT_TYPE, decodeRaw, decodeTransfer, decodeTrigger } from '../../src/chains/tron/protobuf.ts';
import { fromBaseUnits, toBaseUnits } from '../../src/chains/units.ts';
import { Money } from '../../src/domain/money.ts';
import { fixture } from '../support/fake-chains/fixtures.ts';
import { tonFriendly } from '../support/fake-chains/ton.ts';

describe('Tron receiving addresses', () => {
  const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
  /** From the private key, the way wallets derive m/44'/195'/0'/0/i: no code of src/chains/hd.ts. */
  const walletAddress = (mnemonic: string, index: number) => {
    const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/195'/0'/0/${index}`);
    const publicKey = secp256k1.getPublicKey(key.privateKey!, false);
    return createBase58check(sha256).encode(Uint8Array.of(0x41, ...keccak_256(publicKey.subarray(1)).subarray(12)));
  };

  it('derive watch-only from the account xpub to the addresses wallets show for the mnemonic', () => {
    // The address wallets show first for BIP-39's all-"abandon" mnemonic.
    expect(walletAddress(ABANDON, 0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    const xpub = HDKey.fromMasterSeed(mnemonicToSeedSync(ABANDON)).derive(ACCOUNT_PATHS.tron.main).publicExtendedKey;
    const account = parseExtendedPublicKey(xpub);
    for (const index of [0, 1, 17, 2 ** 31 - 1]) expect(deriveAddress(account, 'tron', index)).toBe(walletAddress(ABANDON, index));
  });
});

describe('JSON answers with exact integers', () => {
  it('keeps integers beyond 2^53 exact, wherever they are, and leaves everything else as JSON.parse does', () => {
    expect(parseJsonExactIntegers('{"balance":9007199254740993,"list":[1,-12345678901234567],"ok":true}')).toEqual({
      balance: 9007199254740993n,
      list: [1, -12345678901234567n],
      ok: true,
    });
    // 16 digits within range, strings of digits and decimals are not touched.
    expect(parseJsonExactIntegers('{"a":1714060800000123,"s":"12345678901234567890","f":0.5}')).toEqual({ a: 1714060800000123, s: '12345678901234567890', f: 0.5 });
    expect(parseJsonExactIntegers('{"s":"x:12345678901234567890"}')).toEqual({ s: 'x:12345678901234567890' });
  });

  it('reads integer fields as bigint and refuses anything a float could have rounded', () => {
    expect(integerOf(25, 'x')).toBe(25n);
    expect(integerOf('2500000000', 'x')).toBe(2_500_000_000n);
    expect(integerOf(2n ** 64n, 'x')).toBe(2n ** 64n);
    expect(() => integerOf(2 ** 60, 'a balance')).toThrow(/a balance is not an integer/);
    expect(() => integerOf(1.5, 'x')).toThrow();
    expect(() => integerOf('1e3', 'x')).toThrow();
  });
});

describe('base units', () => {
  it('converts both ways exactly and never rounds an amount away', () => {
    expect(fromBaseUnits(101_000_001n, 6).toFixed()).toBe('101.000001');
    expect(fromBaseUnits(12_345_678_123_456_789n, 9).toFixed()).toBe('12345678.123456789');
    expect(toBaseUnits(new Money('12.25'), 6)).toBe(12_250_000n);
    expect(toBaseUnits(new Money('0.000000001'), 9)).toBe(1n);
    expect(() => toBaseUnits(new Money('0.0000001'), 6)).toThrow(/more than 6 decimal places/);
  });
});

describe("Tron's raw transaction", () => {
  it('reads the fixture transactions: their txID is the hash of these bytes, and they say what their JSON says', () => {
    const [trx, usdt] = fixture('tron/getblockbynum').transactions;
    for (const tx of [trx, usdt, fixture('tron/createtransaction'), fixture('tron/triggersmartcontract').transaction]) {
      expect(bytesToHex(sha256(hexToBytes(tx.raw_data_hex)))).toBe(tx.txID);
      const raw = decodeRaw(hexToBytes(tx.raw_data_hex));
      expect(raw.expiration).toBe(BigInt(tx.raw_data.expiration));
      expect(raw.timestamp).toBe(BigInt(tx.raw_data.timestamp));
    }
    const transfer = decodeRaw(hexToBytes(trx.raw_data_hex));
    expect(transfer.contracts.map((c) => [c.type, c.typeUrl])).toEqual([[CONTRACT_TYPE.TransferContract, 'type.googleapis.com/protocol.TransferContract']]);
    expect(decodeTransfer(transfer.contracts[0]!.value).amount).toBe(BigInt(trx.raw_data.contract[0].parameter.value.amount));
    const call = decodeRaw(hexToBytes(usdt.raw_data_hex));
    expect(call.feeLimit).toBe(100_000_000n);
    const trigger = decodeTrigger(call.contracts[0]!.value);
    expect(trigger.contract).toEqual(Uint8Array.of(0x41, ...tronAccountBytes(usdt.raw_data.contract[0].parameter.value.contract_address)));
    expect(Buffer.from(trigger.data).toString('hex')).toBe(usdt.raw_data.contract[0].parameter.value.data);
    expect(trigger.callValue).toBe(0n);
    // Truncated bytes are refused, not half read.
    expect(() => decodeRaw(hexToBytes(trx.raw_data_hex).subarray(0, 20))).toThrow(/truncated/);
  });
});

describe('TON accounts', () => {
  it('are the same account in bounceable, non-bounceable and raw form; a bad checksum is none', () => {
    const hash = new Uint8Array(32).fill(0xab);
    const bounceable = encodeAddress('ton', hash);
    expect(bounceable).toBe(tonFriendly(hash, true));
    const id = tonAccountId(bounceable);
    expect(id).toBe(`0:${'ab'.repeat(32)}`);
    expect(tonAccountId(tonFriendly(hash, false))).toBe(id);
    expect(tonAccountId(`0:${'AB'.repeat(32)}`)).toBe(id);
    expect(tonAccountId(bounceable.slice(0, -1) + (bounceable.endsWith('A') ? 'B' : 'A'))).toBeNull();
  });
});
