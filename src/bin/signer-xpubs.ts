// npm run signer:xpubs — the extended public keys of the signer's accounts (SIGNER_MNEMONIC_FILE), per network: what
// CHAINS_FILE's `xpub` entries are. Public keys only; the mnemonic never leaves this process.
import { ACCOUNT_PATHS, HD_NETWORKS } from '../chains/hd.ts';
import { Signer } from '../chains/signer.ts';
import { loadConfigOrExit } from '../config.ts';

const config = loadConfigOrExit();
const signer = Signer.fromConfig(config);
if (!signer) {
  console.error('signer:xpubs: set SIGNER_MNEMONIC_FILE (or SIGNER_MNEMONIC) to the signer mnemonic');
  process.exit(2);
}
const accounts = Object.fromEntries(
  HD_NETWORKS.map((network) => {
    const { main, test } = ACCOUNT_PATHS[network];
    const entry: Record<string, string> = { path: main, xpub: signer.accountXpub(network, false) };
    // Test networks (testnet, regtest) of the UTXO chains have their own account and tpub form.
    if (test !== main) {
      Object.assign(entry, { testPath: test, testXpub: signer.accountXpub(network, true) });
    }
    return [network, entry];
  }),
);
console.log(JSON.stringify(accounts, null, 2));
