// The Uniswap V2 venue's entry of SWAP_CONFIG (docs/autoswap.md, "Uniswap V2 venue"): per EVM network the router, its
// WETH, the pairs it may swap (with their minimums), gas caps and confirmations. Token contracts are not repeated
// here: they are CHAINS_FILE's (tokens.usdterc20, tokens.usdc), so a swap can only ever touch a token the watcher
// knows. Checked at start with every problem named by its path.
import { isAddress } from 'viem';
import { z } from 'zod';
import { NATIVE_ASSET } from '../../../chains/custody.ts';
import { decimal } from '../../../core/validation.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../../domain/assets.ts';

export const UNISWAP_V2_NETWORKS = ['ethereum', 'bsc'] as const;
export type UniswapV2Network = (typeof UNISWAP_V2_NETWORKS)[number];

const address = z.string().refine((a) => isAddress(a, { strict: true }), 'must be a 0x address (EIP-55 checksummed or single-case)');
const currency = z.enum(PAYMENT_CURRENCIES, { message: `must be one of ${PAYMENT_CURRENCIES.join(', ')}` });

const pairSchema = z
  .object({
    from: currency,
    to: currency,
    /** The least amount of `from` one swap takes (below it gas would eat the swap); none: no minimum. */
    minimum: decimal({ positive: true }).optional(),
  })
  .strict();

export const uniswapV2NetworkSchema = z
  .object({
    /** UniswapV2Router02 (Ethereum mainnet: 0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D). */
    router: address,
    /** The WETH the router wraps ether into (checked against router.WETH() before the first swap). */
    weth: address,
    pairs: z.array(pairSchema).min(1).max(20),
    /** Cap on maxFeePerGas of a swap, in gwei: while the base fee is above it, swaps wait (the chain's maxFeeGwei caps too). */
    maxFeeGwei: decimal({ positive: true }).optional(),
    /** Gas limit of one swap transaction (and of an approve): an estimate above it refuses the swap. */
    gasLimit: z.number().int().min(50_000).max(2_000_000).default(300_000),
    /** When a swap counts as final; default: the chain's confirmations (CHAINS_FILE, else the currency's). */
    confirmations: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();

export const uniswapV2ConfigSchema = z.object({ ethereum: uniswapV2NetworkSchema.optional(), bsc: uniswapV2NetworkSchema.optional() }).strict();

export type UniswapV2NetworkConfig = z.output<typeof uniswapV2NetworkSchema>;
export type UniswapV2Config = z.output<typeof uniswapV2ConfigSchema>;

export class SwapConfigError extends Error {}

/** The payment currencies a network carries in this process (its live node's: the native coin and CHAINS_FILE's tokens), or null without a node. */
export type CarriedCurrencies = (network: UniswapV2Network) => readonly PaymentCurrency[] | null;

/**
 * The venue's entry of SWAP_CONFIG (`{"venue": "uniswap-v2", "ethereum": {...}}`, without `venue`), checked on its
 * own and against the chains: each pair's currencies are of that network, not the same, not to the native coin (the
 * router's swapExactTokensForETH is not used), and each is carried there (a token needs its contract in
 * CHAINS_FILE). Throws SwapConfigError naming every problem by its path.
 */
export function parseUniswapV2Options(options: unknown, carried: CarriedCurrencies): UniswapV2Config {
  const parsed = uniswapV2ConfigSchema.safeParse(options);
  const problems = parsed.success
    ? checkAgainstChains(parsed.data, carried)
    : parsed.error.issues.map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`);
  if (problems.length) throw new SwapConfigError(`venue uniswap-v2:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return parsed.data!;
}

/** What in `config` the chains cannot carry (pure; `<network>.pairs.<i>.<side>: why` each). */
export function checkAgainstChains(config: UniswapV2Config, carried: CarriedCurrencies): string[] {
  const problems: string[] = [];
  for (const network of UNISWAP_V2_NETWORKS) {
    const venue = config[network];
    if (!venue) continue;
    const currencies = carried(network);
    if (!currencies) {
      problems.push(`${network}: ${network} has no node in CHAINS_FILE (swaps are live mode's, on a real node)`);
      continue;
    }
    const seen = new Set<string>();
    venue.pairs.forEach((pair, i) => {
      const at = `${network}.pairs.${i}`;
      const key = `${pair.from}/${pair.to}`;
      if (seen.has(key)) problems.push(`${at}: ${key} is listed twice`);
      seen.add(key);
      if (pair.from === pair.to) problems.push(`${at}: from and to are both ${pair.from}`);
      for (const side of ['from', 'to'] as const) {
        const c = pair[side];
        if (PAYMENT_CURRENCY_INFO[c].network !== network) problems.push(`${at}.${side}: ${c} is a currency of ${PAYMENT_CURRENCY_INFO[c].network}, not of ${network}`);
        else if (!currencies.includes(c)) problems.push(`${at}.${side}: ${c} has no contract in CHAINS_FILE (${network}.tokens.${c})`);
      }
      if (pair.to === NATIVE_ASSET[network]) problems.push(`${at}.to: swaps to ${pair.to} are not supported (only from it, or between tokens)`);
    });
  }
  return problems;
}
