// The signer: the one component that holds private keys, for what goes out (withdrawals, refunds, consolidation).
// Its mnemonic comes from its own configuration (SIGNER_MNEMONIC_FILE; SIGNER_MNEMONIC for development and tests),
// never from CHAINS_FILE, a request or the database, and it answers signatures, not keys. Receiving needs none of it:
// addresses derive from extended public keys (hd.ts). At start the signer checks that its account keys are the
// ones CHAINS_FILE names, so the service never hands out addresses it could not spend.
import fs from 'node:fs';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { HDKey } from '@scure/bip32';
import { Transaction } from '@scure/btc-signer';
import { toHex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ACCOUNT_PATHS, addressOfPublicKey, extendedPublicKey, type HdNetwork } from './hd.ts';
import type { AddressOptions } from './address-formats.ts';

/** A key of an account: chain 0 receives (deposit addresses), chain 1 is the service's own (hot wallet, change). */
export interface KeyPath {
  chain: 0 | 1;
  index: number;
}

/** Why a process without the signer sends nothing. */
export const NO_SIGNER = 'this service holds no signer (SIGNER_MNEMONIC_FILE): it cannot send';

/**
 * Why nothing can be sent for want of a signer, or null. A server that leaves sending to the chains worker
 * (CHAIN_WORKER=0) holds no signer by design: the worker does, and checks it at its start.
 */
export const signerRefusal = (context: { signer: Signer | null; sendsHere: boolean }): string | null => (context.sendsHere && !context.signer ? NO_SIGNER : null);

/** The hot wallet of a network: where consolidation brings funds and what withdrawals are paid from. */
export const HOT_WALLET: KeyPath = { chain: 1, index: 0 };

export class Signer {
  private readonly master: HDKey;

  private constructor(mnemonic: string) {
    this.master = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic));
  }

  /** From SIGNER_MNEMONIC_FILE or SIGNER_MNEMONIC; null when neither is set (nothing can be sent then). */
  static fromConfig(config: { signerMnemonicFile?: string | undefined; signerMnemonic?: string | undefined }): Signer | null {
    const mnemonic = config.signerMnemonicFile ? fs.readFileSync(config.signerMnemonicFile, 'utf8') : config.signerMnemonic;
    if (!mnemonic) return null;
    const words = mnemonic.trim().split(/\s+/).join(' ');
    if (!validateMnemonic(words, wordlist)) throw new Error('the signer mnemonic is not a valid BIP-39 English mnemonic');
    return new Signer(words);
  }

  /** For tests: a signer of a known mnemonic. */
  static fromMnemonic(mnemonic: string): Signer {
    if (!validateMnemonic(mnemonic, wordlist)) throw new Error('not a valid BIP-39 English mnemonic');
    return new Signer(mnemonic);
  }

  private account(network: HdNetwork, test: boolean): HDKey {
    return this.master.derive(ACCOUNT_PATHS[network][test ? 'test' : 'main']);
  }

  private key(network: HdNetwork, test: boolean, path: KeyPath): HDKey {
    return this.account(network, test).deriveChild(path.chain).deriveChild(path.index);
  }

  /** The account's extended public key (what CHAINS_FILE names), in BIP-32 xpub form, or tpub for test networks. */
  accountXpub(network: HdNetwork, test: boolean): string {
    return extendedPublicKey(this.account(network, test), test);
  }

  /** Whether `account` (from CHAINS_FILE, in whichever version bytes) is this signer's account of `network`. */
  ownsAccount(network: HdNetwork, test: boolean, account: HDKey): boolean {
    const own = this.account(network, test);
    return equalBytes(own.publicKey!, account.publicKey!) && equalBytes(own.chainCode!, account.chainCode!);
  }

  /** The address of one of the signer's keys. */
  address(network: HdNetwork, test: boolean, path: KeyPath, options: AddressOptions = {}): string {
    return addressOfPublicKey(network, this.key(network, test, path).publicKey!, options);
  }

  /** An EVM account (viem) that signs with the key at `path`; the key stays inside it. */
  evmAccount(network: Extract<HdNetwork, 'ethereum' | 'bsc'>, path: KeyPath): PrivateKeyAccount {
    return privateKeyToAccount(toHex(this.key(network, false, path).privateKey!));
  }

  /** Signs every input of a PSBT whose key is at one of `paths`, and answers the signed PSBT. */
  signPsbt(network: Extract<HdNetwork, 'bitcoin' | 'litecoin' | 'bitcoin-cash'>, test: boolean, psbt: Uint8Array, inputPaths: KeyPath[]): Uint8Array {
    const tx = Transaction.fromPSBT(psbt);
    inputPaths.forEach((path, i) => tx.signIdx(this.key(network, test, path).privateKey!, i));
    return tx.toPSBT();
  }

  /** A raw secp256k1 signature of a 32-byte digest (Tron transactions sign their txID). */
  signDigest(network: HdNetwork, path: KeyPath, digest: Uint8Array): Uint8Array {
    return this.key(network, false, path).sign(digest);
  }
}

const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
