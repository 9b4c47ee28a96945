// The Tron protobuf code against transactions real nodes built (test/fixtures/chains/tron/node-built.json, origins
// there): the txID is sha256 of raw_data_hex, the reader finds what they say, and raw_data serialised again (what
// java-tron's /wallet/broadcasttransaction verifies the signature against) is exactly their raw_data_hex.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { CONTRACT_TYPE, decodeRaw, decodeTransfer, decodeTrigger, encodeRawJson } from '../../src/chains/tron/protobuf.ts';
import { fixture } from '../support/fake-chains/fixtures.ts';

interface NodeBuilt {
  origin: string;
  txID: string;
  raw_data: any;
  raw_data_hex: string;
}

/** visible=false: addresses are hex with the 0x41 prefix. */
const hexAccount = (address: string) => {
  expect(address).toMatch(/^41[0-9a-f]{40}$/);
  return hexToBytes(address.slice(2));
};

describe('Tron transactions built by real nodes', () => {
  const transactions = fixture<NodeBuilt[]>('tron/node-built');

  it.each(transactions.map((t) => [t.origin, t] as const))('%s: txID, contract and re-serialised raw_data', (_origin, tx) => {
    const raw = hexToBytes(tx.raw_data_hex);
    expect(bytesToHex(sha256(raw))).toBe(tx.txID);
    expect(bytesToHex(encodeRawJson(tx.raw_data, hexAccount))).toBe(tx.raw_data_hex);
    const decoded = decodeRaw(raw);
    expect(decoded.expiration).toBe(BigInt(tx.raw_data.expiration));
    expect(decoded.feeLimit).toBe(BigInt(tx.raw_data.fee_limit ?? 0));
    const [contract] = decoded.contracts;
    const value = tx.raw_data.contract[0].parameter.value;
    if (contract!.type === CONTRACT_TYPE.TransferContract) {
      const t = decodeTransfer(contract!.value);
      expect([bytesToHex(t.owner), bytesToHex(t.to), t.amount]).toEqual([value.owner_address, value.to_address, BigInt(value.amount)]);
    } else {
      const t = decodeTrigger(contract!.value);
      expect([bytesToHex(t.owner), bytesToHex(t.contract), bytesToHex(t.data)]).toEqual([value.owner_address, value.contract_address, value.data]);
    }
  });

  it('refuses to serialise what it cannot write exactly (an unknown field, another contract), and a changed field changes the bytes', () => {
    const [token] = transactions;
    expect(() => encodeRawJson({ ...token!.raw_data, data: 'zz' }, hexAccount)).toThrow(/not hex/);
    expect(() => encodeRawJson({ ...token!.raw_data, auths: [] }, hexAccount)).toThrow(/fields this service does not write: auths/);
    const freeze = structuredClone(token!.raw_data);
    freeze.contract[0].type = 'FreezeBalanceV2Contract';
    expect(() => encodeRawJson(freeze, hexAccount)).toThrow(/not one this service sends/);
    const later = { ...token!.raw_data, expiration: token!.raw_data.expiration + 1 };
    expect(bytesToHex(encodeRawJson(later, hexAccount))).not.toBe(token!.raw_data_hex);
  });
});
