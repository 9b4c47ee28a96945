// Real chains in tests: a CHAINS_FILE written for the run, and the signer's test mnemonic with the extended public
// keys it implies (so addresses derive from the public keys as in production, and the signer can spend them).
import fs from 'node:fs';
import path from 'node:path';
import type { ChainsFile } from '../../src/chains/config.ts';
import type { HdNetwork } from '../../src/chains/hd.ts';
import { Signer } from '../../src/chains/signer.ts';
import { tempDir } from './processes.ts';

/** The signer's mnemonic in every chain test (BIP-39's second test vector; never use it for money). */
export const TEST_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
export const testSigner = Signer.fromMnemonic(TEST_MNEMONIC);

/** The account public key CHAINS_FILE names for `network` (tpub on test networks). */
export const testXpub = (network: HdNetwork, test: boolean) => testSigner.accountXpub(network, test);

/** A RATES_CONFIG whose one source is the static table (RATES_FILE or the built-in one). */
export const STATIC_LIVE_RATES = path.resolve(import.meta.dirname, '../fixtures/rates/static-live.json');

/** Writes `chains` as a CHAINS_FILE; answers the environment that points the server (and its signer) at it. */
export function chainsEnv(chains: ChainsFile | Record<string, unknown>): Record<string, string> {
  const file = path.join(tempDir('payrail-chains-'), 'chains.json');
  fs.writeFileSync(file, JSON.stringify(chains, null, 2));
  // Live mode needs rates: the static table, named in RATES_CONFIG (docs/rates.md), keeps these tests' amounts as before.
  return { CHAINS_FILE: file, SIGNER_MNEMONIC: TEST_MNEMONIC, RATES_CONFIG: STATIC_LIVE_RATES };
}
