import { z } from 'zod';
import { configSection, milliseconds } from '../core/config-section.ts';
import { decimal } from '../core/validation.ts';
import { loadSwapConfig, type SwapConfig } from './venues/registry.ts';

export const autoswapConfig = configSection(
  'AUTOSWAP_',
  {
    /** The driver also runs this often (it wakes at once on credits and on venue answers); a venue is polled then. */
    AUTOSWAP_INTERVAL_MS: milliseconds(50, 3_600_000, 2_000),
    /** How long a process holds a swap it drives before another may take it over (after a crash). */
    AUTOSWAP_LEASE_MS: milliseconds(100, 3_600_000, 60_000),
    /** The first retry delay after a venue was down, below its minimum or without a route; doubled each time. */
    AUTOSWAP_RETRY_MS: milliseconds(10, 3_600_000, 30_000),
    /** Attempts before such a swap fails for good (its money released). */
    AUTOSWAP_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
    /** A venue must fill within this long of a submission, or not at all. */
    AUTOSWAP_DEADLINE_MS: milliseconds(1_000, 3_600_000, 600_000),
    /** Our fee on a swap, in percent of its output (0: none; docs/autoswap.md). */
    AUTOSWAP_FEE_PERCENT: decimal({ min: 0, max: 5, shape: { integerDigits: 1, scale: 4 } }).optional(),
    /** JSON file naming the live venues and their pairs (docs/autoswap.md); without it live mode has no route. */
    SWAP_CONFIG: z.string().min(1).max(4096).optional(),
  },
  (values): { swap: SwapConfig } | string => {
    if (!values.swapConfig) return { swap: { venues: [] } };
    try {
      return { swap: loadSwapConfig(values.swapConfig) };
    } catch (e) {
      return `SWAP_CONFIG: ${(e as Error).message}`;
    }
  },
);
