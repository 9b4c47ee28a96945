// The litecoind of the UTXO adapter's tests: the binary test/global-setup.ts found (TEST_LITECOIND), one node per
// describe block (litecoind-node.ts starts and stops it).
import { afterAll, beforeAll, inject } from 'vitest';
import { startLitecoind, type Litecoind } from './litecoind-node.ts';

export type { Litecoind };
export const LITECOIND = inject('litecoind');

/** One node for the enclosing describe block. */
export function useLitecoind(): { readonly node: Litecoind } {
  let node: Litecoind | undefined;
  beforeAll(async () => {
    node = await startLitecoind(LITECOIND!);
  });
  afterAll(async () => {
    await node?.stop();
  });
  return {
    get node() {
      if (!node) throw new Error('litecoind not started');
      return node;
    },
  };
}
