// Receiving addresses from extended public keys, cross-checked against published vectors and a second library for
// each scheme; the signer's keys are the ones the public keys promise.
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { NETWORK, p2wpkh } from '@scure/btc-signer';
import { base58check as base58checkOf } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { mnemonicToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_PATHS, deriveAddress, parseExtendedPublicKey } from '../../src/chains/hd.ts';
import { HOT_WALLET, Signer } from '../../src/chains/signer.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const master = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
const accountXpub = (path: string) => master.derive(path).publicExtendedKey;

describe('receiving addresses from an extended public key', () => {
  it('BIP-84 (the specification’s own vector): zpub in, bc1 address out', () => {
    const zpub = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
    const account = parseExtendedPublicKey(zpub);
    expect(deriveAddress(account, 'bitcoin', 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(deriveAddress(account, 'bitcoin', 1)).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    // The same account as a plain xpub gives the same addresses.
    expect(deriveAddress(parseExtendedPublicKey(accountXpub(ACCOUNT_PATHS.bitcoin.main)), 'bitcoin', 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
  });

  it('agrees with @scure/btc-signer for Litecoin regtest and testnet segwit addresses', () => {
    const account = parseExtendedPublicKey(accountXpub(ACCOUNT_PATHS.litecoin.test));
    for (const index of [0, 7, 1234]) {
      const publicKey = master.derive(`${ACCOUNT_PATHS.litecoin.test}/0/${index}`).publicKey!;
      const regtest = { ...NETWORK, bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef };
      expect(deriveAddress(account, 'litecoin', index, { regtest: true })).toBe(p2wpkh(publicKey, regtest).address);
      expect(deriveAddress(account, 'litecoin', index, { testnet: true })).toBe(p2wpkh(publicKey, { ...regtest, bech32: 'tltc' }).address);
    }
  });

  it('agrees with viem for Ethereum (m/44’/60’/0’/0/i) and for Tron’s account bytes (m/44’/195’/0’/0/i)', () => {
    const eth = parseExtendedPublicKey(accountXpub(ACCOUNT_PATHS.ethereum.main));
    expect(deriveAddress(eth, 'ethereum', 0)).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    for (const index of [0, 5, 99]) {
      expect(deriveAddress(eth, 'ethereum', index)).toBe(mnemonicToAccount(MNEMONIC, { addressIndex: index }).address);
      // viem types its paths as Ethereum's; the derivation itself takes any path.
      const tronBytes = mnemonicToAccount(MNEMONIC, { path: `m/44'/195'/0'/0/${index}` as `m/44'/60'/${string}` }).address.slice(2);
      const expected = base58checkOf(sha256).encode(Uint8Array.from(Buffer.from(`41${tronBytes}`, 'hex')));
      expect(deriveAddress(parseExtendedPublicKey(accountXpub(ACCOUNT_PATHS.tron.main)), 'tron', index)).toBe(expected);
    }
  });

  it('refuses private keys and strangers', () => {
    expect(() => parseExtendedPublicKey(master.derive(ACCOUNT_PATHS.bitcoin.main).privateExtendedKey)).toThrow(/PRIVATE/);
    expect(() => parseExtendedPublicKey('not a key')).toThrow(/extended public key/);
  });
});

describe('the signer', () => {
  const signer = Signer.fromMnemonic(MNEMONIC);

  it('owns exactly the accounts its mnemonic derives, in any version bytes', () => {
    expect(signer.ownsAccount('ethereum', false, parseExtendedPublicKey(accountXpub(ACCOUNT_PATHS.ethereum.main)))).toBe(true);
    const zpub = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
    expect(signer.ownsAccount('bitcoin', false, parseExtendedPublicKey(zpub))).toBe(true);
    const other = Signer.fromMnemonic('legal winner thank year wave sausage worth useful legal winner thank yellow');
    expect(other.ownsAccount('bitcoin', false, parseExtendedPublicKey(zpub))).toBe(false);
    expect(parseExtendedPublicKey(signer.accountXpub('litecoin', true)).publicKey).toEqual(master.derive(ACCOUNT_PATHS.litecoin.test).publicKey);
  });

  it('signs with the key its address names; refuses a mnemonic with a bad checksum', () => {
    expect(signer.evmAccount('ethereum', HOT_WALLET).address).toBe(signer.address('ethereum', false, HOT_WALLET));
    expect(signer.evmAccount('ethereum', { chain: 0, index: 3 }).address).toBe(mnemonicToAccount(MNEMONIC, { addressIndex: 3 }).address);
    expect(() => Signer.fromMnemonic(MNEMONIC.replace('about', 'abandon'))).toThrow(/BIP-39/);
  });
});
