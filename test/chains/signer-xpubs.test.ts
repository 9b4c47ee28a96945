// npm run signer:xpubs: the account keys CHAINS_FILE needs, from the signer's mnemonic file, public keys only.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_MNEMONIC, testXpub } from '../support/chains.ts';
import { runCli, tempDir } from '../support/processes.ts';

describe('signer:xpubs', () => {
  it("prints each network's account path and extended public key (tpub for UTXO test networks), and never the mnemonic", async () => {
    const file = path.join(tempDir('payrail-signer-'), 'mnemonic');
    fs.writeFileSync(file, `${TEST_MNEMONIC}\n`, { mode: 0o600 });
    const cli = await runCli('src/bin/signer-xpubs.ts', [], { DATA_DIR: tempDir(), SIGNER_MNEMONIC_FILE: file, LOG_LEVEL: 'silent' });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.json).toEqual({
      bitcoin: { path: "m/84'/0'/0'", xpub: testXpub('bitcoin', false), testPath: "m/84'/1'/0'", testXpub: testXpub('bitcoin', true) },
      litecoin: { path: "m/84'/2'/0'", xpub: testXpub('litecoin', false), testPath: "m/84'/1'/0'", testXpub: testXpub('litecoin', true) },
      'bitcoin-cash': { path: "m/44'/145'/0'", xpub: testXpub('bitcoin-cash', false), testPath: "m/44'/1'/0'", testXpub: testXpub('bitcoin-cash', true) },
      ethereum: { path: "m/44'/60'/0'", xpub: testXpub('ethereum', false) },
      bsc: { path: "m/44'/60'/1'", xpub: testXpub('bsc', false) },
      tron: { path: "m/44'/195'/0'", xpub: testXpub('tron', false) },
    });
    expect(testXpub('ethereum', false)).toMatch(/^xpub/);
    expect(cli.stdout + cli.stderr).not.toContain(TEST_MNEMONIC.split(' ')[0]);
  });

  it('says what to set when no mnemonic is configured', async () => {
    const cli = await runCli('src/bin/signer-xpubs.ts', [], { DATA_DIR: tempDir(), LOG_LEVEL: 'silent' });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('set SIGNER_MNEMONIC_FILE');
  });
});
