// The CHAINS_FILE examples the README shows are valid files, and their keys are the tests' signer accounts.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainsFileSchema } from '../../src/chains/config.ts';
import { testXpub } from '../support/chains.ts';

const readme = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Real chains'), readme.indexOf('## Documentation'));
const examples = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);

describe("the README's CHAINS_FILE examples", () => {
  it('are an anvil and a litecoind configuration that CHAINS_FILE accepts, with the signer accounts the tests use', () => {
    expect(examples.map((e) => Object.keys(e))).toEqual([['ethereum'], ['litecoin']]);
    const [anvil, litecoind] = examples.map((e) => chainsFileSchema.parse(e));
    expect(anvil!.ethereum).toMatchObject({ chainId: 31337, xpub: testXpub('ethereum', false), confirmations: 3 });
    expect(litecoind!.litecoin).toMatchObject({ chain: 'regtest', xpub: testXpub('litecoin', true) });
  });
});
