// Which chains are real and where their nodes are: CHAINS_FILE, a JSON file read and checked at start. A network
// it does not name runs on the sandbox chain (SANDBOX=1) or is off (SANDBOX=0). Keys to SIGN are not here: the
// signer has its own configuration (signer.ts); this file holds extended PUBLIC keys only.
import fs from 'node:fs';
import { isAddress } from 'viem';
import { z } from 'zod';
import { NETWORKS, type Network } from '../domain/assets.ts';
import { decimal } from '../core/validation.ts';
import { Money } from '../domain/money.ts';
import { parseExtendedPublicKey } from './hd.ts';
import { validateAddress } from './address-formats.ts';

const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);
const extendedPublicKey = z
  .string()
  .max(200)
  .refine((key) => {
    try {
      parseExtendedPublicKey(key);
      return true;
    } catch {
      return false;
    }
  }, 'must be an extended public key (xpub, tpub, zpub, vpub, Ltub or Mtub) of the account, never a private one');
const evmAddress = z.string().refine((a) => isAddress(a, { strict: true }), 'must be a 0x address (EIP-55 checksummed or single-case)');

/** HTTP header names and one-line values (what a provider's API key header needs). */
const headers = z
  .record(z.string(), z.string().max(4_096).regex(/^[^\r\n\0]*$/, 'must be one line'))
  .superRefine((h, ctx) => {
    if (Object.keys(h).length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 headers' });
    for (const name of Object.keys(h)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must be an HTTP header name' });
    }
  });

/** A provider's limits (src/chains/rate-limit.ts): TronGrid, toncenter and public Solana RPCs have quotas. */
const rateLimit = z
  .object({
    /** Requests per second on average. */
    perSecond: z.number().positive().max(10_000),
    /** Requests at once, and the largest JSON-RPC batch; default: perSecond rounded up. */
    burst: z.number().int().min(1).max(10_000).optional(),
    /** The provider's daily quota: spent evenly, an hour's worth at most at once. */
    perDay: z.number().int().min(1).max(1_000_000_000).optional(),
    /** The longest backoff after a throttling answer without Retry-After. */
    maxBackoffMs: z.number().int().min(100).max(600_000).optional(),
  })
  .strict();

const common = {
  /** How logs, errors, /health and readiness name the node; default: scheme://host:port of its URL (never its path, query or credentials). */
  label: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[^\p{Cc}]*$/u, 'must be printable text')
    .optional(),
  /** Headers sent with every request to the node (an API key); their values are never shown or logged. */
  headers: headers.optional(),
  /** How long one request to the node may take; default: 15 s for HTTP APIs, 60 s for UTXO nodes. */
  timeoutMs: z.number().int().min(100).max(600_000).optional(),
  /** Confirmations after which a payment counts; default: the network's (docs/payments.md). */
  confirmations: z.number().int().min(1).max(10_000).optional(),
  /** A node that does not answer at start does not stop the start: its currencies are refused until it answers. */
  optional: z.boolean().default(false),
  /** How often the watcher looks for new blocks. */
  pollMs: z.number().int().min(50).max(600_000).default(2_000),
};

export const evmChainSchema = z
  .object({
    rpcUrl: url,
    chainId: z.number().int().min(1).max(2 ** 40),
    /** The account's extended public key (m/44'/60'/0' on Ethereum, m/44'/60'/1' on BSC): receiving addresses are its <account>/0/<index>. */
    xpub: extendedPublicKey,
    /** ERC-20 contracts of the tokens paid on this chain (only currencies of this network: usdterc20 and usdc on Ethereum). */
    tokens: z.object({ usdterc20: evmAddress.optional(), usdc: evmAddress.optional() }).strict().default({}),
    /** Where scanning starts the first time: the current block, or a block number. */
    startBlock: z.union([z.literal('latest'), z.number().int().min(0)]).default('latest'),
    /** EIP-1559 fee caps, in gwei: the fee the node suggests is used up to these (maxFeeGwei caps a legacy gas price too). */
    maxFeeGwei: decimal({ positive: true }).optional(),
    priorityFeeGwei: decimal({ min: 0 }).optional(),
    /** A send not mined after this many blocks is replaced with higher fees (same nonce). */
    replaceAfterBlocks: z.number().int().min(1).max(10_000).default(12),
    /** Blocks read at once while catching up. */
    batchBlocks: z.number().int().min(1).max(100).default(10),
    /** Consolidation: confirmed deposits move to the hot wallet at most this often (0: at every scan). */
    sweepIntervalMs: z.number().int().min(0).max(7 * 86_400_000).default(3_600_000),
    /** A token deposit is swept once it holds this much (a decimal string, in token units): below, gas would eat it. */
    sweepTokenMinimum: decimal({ positive: true }).default(new Money(10)),
    /** A native deposit is swept once it holds this much, and at least ten times its sweep's fee. */
    sweepNativeMinimum: decimal({ positive: true }).optional(),
    /** Deposit addresses one consolidation pass sweeps at most (the rest wait for the next pass). */
    sweepMaxAddresses: z.number().int().min(1).max(1_000).default(50),
    ...common,
  })
  .strict();

export const utxoChainSchema = z
  .object({
    /** Bitcoin Core JSON-RPC, with the credentials in the URL (http://user:password@host:port). */
    rpcUrl: url,
    /** The node's wallet that watches our addresses (created as a watch-only legacy wallet if missing). */
    wallet: z.string().regex(/^[\w.-]{1,64}$/, 'must be 1-64 letters, digits, . _ -').default('payrail'),
    xpub: extendedPublicKey,
    chain: z.enum(['main', 'test', 'regtest']).default('main'),
    /** Fee rate of outgoing transactions, in base units per virtual byte; default: the node's estimate. */
    feeRate: z.number().min(1).max(100_000).optional(),
    /** Addresses the node watches beyond the last one handed out (the gap limit of wallets). */
    lookahead: z.number().int().min(1).max(10_000).default(20),
    /** Consolidation: confirmed deposits move to the hot wallet at most this often (0: at every scan). */
    sweepIntervalMs: z.number().int().min(0).max(7 * 86_400_000).default(3_600_000),
    /** ... and at once when the confirmed deposits waiting reach this amount (a decimal string, in the coin). */
    sweepThreshold: decimal({ positive: true }).optional(),
    /** Deposits one consolidation spends at most (keeps its transaction well under the standard size limit). */
    sweepMaxInputs: z.number().int().min(1).max(1_000).default(200),
    ...common,
  })
  .strict();

export const tronChainSchema = z
  .object({
    /** A TronGrid-style HTTP API. */
    apiUrl: url,
    rateLimit: rateLimit.optional(),
    apiKey: z.string().max(200).optional(),
    xpub: extendedPublicKey,
    /** The TRC-20 USDT contract (base58). */
    usdtContract: z.string().refine((a) => validateAddress('tron', a), 'must be a Tron address').optional(),
    ...common,
    /**
     * Every 6 s: two 3-second blocks a poll, about 3,000 requests an hour, 72% of TronGrid's 100,000 a day (a poll of
     * 3 s would be 86%); payments count after 19 blocks (a minute) anyway.
     */
    pollMs: z.number().int().min(50).max(600_000).default(6_000),
  })
  .strict();

export const tonChainSchema = z
  .object({
    /** A toncenter-style HTTP API (v2). */
    apiUrl: url,
    rateLimit: rateLimit.optional(),
    apiKey: z.string().max(200).optional(),
    /** The deposit wallet: every payment goes here, told apart by its comment (the invoice's tag). */
    address: z.string().refine((a) => validateAddress('ton', a) || validateAddress('ton', a, { testnet: true }), 'must be a TON address'),
    testnet: z.boolean().default(false),
    ...common,
  })
  .strict();

export const solanaChainSchema = z
  .object({
    /** Solana JSON-RPC. */
    rpcUrl: url,
    rateLimit: rateLimit.optional(),
    /** The receiving wallet: payments are told apart by their Solana Pay reference key. */
    address: z.string().refine((a) => validateAddress('sol', a), 'must be a Solana address'),
    ...common,
  })
  .strict();

export const chainsFileSchema = z
  .object({
    ethereum: z.union([z.literal('sandbox'), evmChainSchema]).optional(),
    bsc: z.union([z.literal('sandbox'), evmChainSchema]).optional(),
    bitcoin: z.union([z.literal('sandbox'), utxoChainSchema]).optional(),
    litecoin: z.union([z.literal('sandbox'), utxoChainSchema]).optional(),
    'bitcoin-cash': z.union([z.literal('sandbox'), utxoChainSchema]).optional(),
    tron: z.union([z.literal('sandbox'), tronChainSchema]).optional(),
    ton: z.union([z.literal('sandbox'), tonChainSchema]).optional(),
    solana: z.union([z.literal('sandbox'), solanaChainSchema]).optional(),
  })
  .strict()
  .superRefine((file, ctx) => {
    // user:password in the URL is sent as the Authorization header: a configured one beside it would be a second.
    for (const network of NETWORKS) {
      const node = file[network];
      if (typeof node !== 'object' || !Object.keys(node.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) continue;
      const url = new URL('rpcUrl' in node ? node.rpcUrl : node.apiUrl);
      if (url.username || url.password) {
        ctx.addIssue({ code: 'custom', path: [network, 'headers'], message: 'must not hold an Authorization header when the URL carries user:password (that is sent as one)' });
      }
    }
    // One account on both EVM chains would make each address one on both: a payment on the wrong chain would credit
    // whoever holds that index there.
    const [eth, bsc] = [file.ethereum, file.bsc];
    if (typeof eth === 'object' && typeof bsc === 'object' && eth.xpub === bsc.xpub) {
      ctx.addIssue({ code: 'custom', path: ['bsc', 'xpub'], message: "must not be the ethereum account: BSC takes m/44'/60'/1' (docs/chains-evm.md)" });
    }
  });

export type ChainsFile = z.output<typeof chainsFileSchema>;
export type EvmChainConfig = z.output<typeof evmChainSchema>;
export type UtxoChainConfig = z.output<typeof utxoChainSchema>;
export type TronChainConfig = z.output<typeof tronChainSchema>;
export type TonChainConfig = z.output<typeof tonChainSchema>;
export type SolanaChainConfig = z.output<typeof solanaChainSchema>;

export class ChainConfigError extends Error {}

/** CHAINS_FILE read and checked; every problem named with its path. No file: every network on the sandbox. */
export function readChainsFile(file: string | undefined): ChainsFile {
  if (!file) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ChainConfigError(`CHAINS_FILE ${file}: ${(e as Error).message}`);
  }
  const parsed = chainsFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ChainConfigError(`CHAINS_FILE ${file}:\n${parsed.error.issues.map((i) => `  ${i.path.join('.') || '(file)'}: ${i.message}`).join('\n')}`);
  }
  return parsed.data;
}

export const configuredNetworks = (file: ChainsFile): Network[] => NETWORKS.filter((n) => file[n] !== undefined && file[n] !== 'sandbox');
