// The venues an autoswap may be filled at (docs/autoswap.md, "Venues"): the sandbox in test mode, and the live
// venues SWAP_CONFIG names. A live venue plugs in with one line in LIVE_VENUES below.
import { z } from 'zod';
import type { Chains } from '../../chains/registry.ts';
import { readConfigFile } from '../../core/validation.ts';
import type { Db } from '../../db/client.ts';
import type { PaymentCurrency } from '../../domain/assets.ts';
import type { Mode } from '../../domain/modes.ts';
import type { Logger } from '../../logger.ts';
import type { RateBook } from '../../pricing/rates.ts';
import type { SwapVenue } from '../venue.ts';
import { uniswapV2Venue } from './uniswap-v2.ts';

/** What a venue may build on. */
export interface VenueDeps {
  db: Db;
  chains: Chains;
  rates: RateBook;
  logger: Logger;
}

/** Builds a live venue from its SWAP_CONFIG entry (the entry without `venue`); throws naming what is wrong. */
export type VenueFactory = (options: Record<string, unknown>, deps: VenueDeps) => SwapVenue;

// ─── THE PLACE LIVE VENUES PLUG IN ────────────────────────────────────────────────────────────────────────────────
// One line per venue: its name in SWAP_CONFIG (`venues[].venue`) and its factory. The Uniswap V2 venue
// (src/autoswap/venues/uniswap-v2.ts) adds: `'uniswap-v2': uniswapV2Venue,`; a ccxt exchange venue would add its own.
export const LIVE_VENUES: Record<string, VenueFactory> = {
  'uniswap-v2': uniswapV2Venue,
};
// ─────────────────────────────────────────────────────────────────────────────────────────────────────────────────

const swapConfigSchema = z
  .object({
    venues: z
      .array(
        z
          .object({ venue: z.string().min(1).max(64) })
          .catchall(z.unknown())
          .refine((v) => Object.hasOwn(LIVE_VENUES, v.venue), { message: 'names no known venue', path: ['venue'] }),
      )
      .max(32),
  })
  .strict();

export interface SwapConfig {
  venues: ({ venue: string } & Record<string, unknown>)[];
}

export const loadSwapConfig = (file: string): SwapConfig => readConfigFile(swapConfigSchema, file) as SwapConfig;

/** The venues of both modes; the first that supports a pair in a mode fills it. */
export class VenueRegistry {
  constructor(readonly venues: SwapVenue[]) {}

  static build(config: SwapConfig, deps: VenueDeps, sandbox: SwapVenue | null): VenueRegistry {
    const live = config.venues.map(({ venue, ...options }) => LIVE_VENUES[venue]!(options, deps));
    return new VenueRegistry([...(sandbox ? [sandbox] : []), ...live]);
  }

  /** The venue for a pair in a mode, or null: no route. */
  route(mode: Mode, from: PaymentCurrency, to: PaymentCurrency): SwapVenue | null {
    return this.venues.find((v) => v.supports(mode, from, to)) ?? null;
  }

  byName(name: string): SwapVenue | null {
    return this.venues.find((v) => v.name === name) ?? null;
  }
}
