// Placeholder until the solana adapter lands: a CHAINS_FILE that names such a network stops the start.
import type { Network } from '../../domain/assets.ts';
import type { SolanaChainConfig } from '../config.ts';
import type { ChainContext, NodeAdapter } from '../registry.ts';

export function solanaAdapter(network: Network, _config: SolanaChainConfig, _context: ChainContext): NodeAdapter {
  throw new Error(`${network}: real nodes of this kind are not supported yet`);
}
