// Placeholder until the utxo adapter lands: a CHAINS_FILE that names such a network stops the start.
import type { Network } from '../../domain/assets.ts';
import type { UtxoChainConfig } from '../config.ts';
import type { ChainContext, NodeAdapter } from '../registry.ts';

export function utxoAdapter(network: Network, _config: UtxoChainConfig, _context: ChainContext): NodeAdapter {
  throw new Error(`${network}: real nodes of this kind are not supported yet`);
}
