// The settings every part of the service shares (listeners, database, limits, sandbox). Feature settings live
// with their feature.
import path from 'node:path';
import { z } from 'zod';
import { configSection, flag, milliseconds, type ConfigOf } from './config-section.ts';
import { PLANTS } from './plant.ts';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ });

export const coreConfig = configSection(
  '',
  {
    PORT: port.default(4000),
    HOST: z.string().min(1).default('0.0.0.0'),
    DATABASE_URL: z
      .string()
      .regex(/^(postgres(ql)?:\/\/|pglite:)/, 'must be a postgresql:// URL or pglite:<data dir>')
      .optional(),
    DATA_DIR: z.string().min(1).default('./data'),
    PUBLIC_BASE_URL: url.optional(),
    PAY_URL: url.optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    /** 0: no named statements (a pooler in transaction mode that does not track them; docs/operations.md). */
    DB_PREPARED_STATEMENTS: flag('1'),
    /** Largest accepted request body, in bytes. */
    BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(10_000_000).default(262_144),
    GRAPHIQL: flag('1'),
    /** Live (graphql-ws) connections one client address may hold at once. */
    LIVE_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).max(100_000).default(100),
    /** Live connections one merchant token may hold at once. */
    LIVE_MAX_CONNECTIONS_PER_MERCHANT: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
    /** Subscriptions running at once on one live connection. */
    LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).max(10_000).default(100),
    /** Reverse proxies in front of the service whose X-Forwarded-For is believed (per-address limits count the client). */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
    /** Failed authentications from one client address within 10 minutes after which each further failure is answered late. */
    AUTH_FAILURES_SLOWDOWN: z.coerce.number().int().min(1).max(100_000).default(10),
    /** Failed authentications from one client address within 10 minutes after which its failures are refused with 429. */
    AUTH_FAILURES_BLOCK: z.coerce.number().int().min(1).max(100_000).default(30),
    /** How long such an address is refused (429 with Retry-After); a valid token from it still passes. */
    AUTH_BLOCK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
    /** A graphql-ws connection with no subscription running for this long is closed. */
    LIVE_IDLE_TIMEOUT_MS: milliseconds(100, 86_400_000, 120_000),
    GRAPHQL_INTROSPECTION: flag('1'),
    ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
    ADMIN_PORT: port.default(0),
    /** Guards the admin API; generated per start and written to the admin state file when unset. */
    ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
    /** Bearer token /metrics on the public listener requires; unset: it answers 404 there (the admin listener serves it). */
    METRICS_TOKEN: z.string().min(24, 'must be at least 24 characters').max(1000).optional(),
    /**
     * The worker processes (chains worker, webhook worker) serve /metrics (METRICS_TOKEN) and /health/live,
     * /health/ready on this port when it is set; what they commit is counted in their own metrics.
     */
    WORKER_METRICS_PORT: port.optional(),
    WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    SHUTDOWN_TIMEOUT_MS: milliseconds(0, 600_000, 10_000),
    /** Simulated chain + test clock for the networks CHAINS_FILE leaves out; 0: those networks are off. */
    SANDBOX: flag('1'),
    /** Sends the sandbox chain refuses before it accepts one (a node outage, to see queued refunds retried). */
    SANDBOX_SEND_FAILURES: z.coerce.number().int().min(0).max(1_000_000).default(0),
    /** The event bus reads the event table at least this often (signals between processes may be lost). */
    EVENT_POLL_MS: milliseconds(10, 60_000, 1_000),
    /** Several instances: committed events fan out through Redis (one instance reads the table for all). */
    REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).max(2048).optional(),
    /** How long an Idempotency-Key answers with its first response. */
    IDEMPOTENCY_KEY_TTL_HOURS: z.coerce.number().int().min(24).max(24 * 365).default(24),
    /** JSON file naming the real chain nodes (src/chains/config.ts); without it every network runs on the sandbox chain. */
    CHAINS_FILE: z.string().min(1).max(4096).optional(),
    /** File holding the signer's BIP-39 mnemonic (what signs withdrawals, refunds and consolidation). */
    SIGNER_MNEMONIC_FILE: z.string().min(1).max(4096).optional(),
    /** The signer's mnemonic itself, for development and tests (prefer SIGNER_MNEMONIC_FILE). */
    SIGNER_MNEMONIC: z.string().min(1).max(1000).optional(),
    /**
     * 1: this server watches the real chains and sends on them (withdrawals, refunds, consolidation), holding the
     * signer. 0: it does none of that and never loads the signer; `npm run chains:worker` does, in its own process.
     */
    CHAIN_WORKER: flag('1'),
    /** Addresses and transaction hashes the risk hook blocks (src/core/risk.ts), separated by commas or spaces. */
    RISK_DENY_LIST: z
      .string()
      .max(1_000_000)
      .default('')
      .transform((v) => v.split(/[\s,]+/).filter(Boolean)),
    /** A deliberate bug for the chaos soak's own proof (docs/soak.md); never set it anywhere else. */
    SOAK_PLANT: z
      .string()
      .max(200)
      .default('')
      .transform((v) => v.split(/[\s,]+/).filter(Boolean))
      .pipe(z.array(z.enum(PLANTS))),
  },
  (c) => {
    // Only one process can open an embedded database, so there is nothing to fan out to.
    if (c.redisUrl && !(c.databaseUrl && /^postgres(ql)?:\/\//.test(c.databaseUrl))) return 'REDIS_URL: needs DATABASE_URL=postgresql://... (an embedded database serves one process)';
    if (!c.chainWorker && !(c.databaseUrl && /^postgres(ql)?:\/\//.test(c.databaseUrl))) {
      return 'CHAIN_WORKER=0: needs DATABASE_URL=postgresql://... (the chains worker is a process of its own; an embedded database serves one process)';
    }
    const dataDir = path.resolve(c.dataDir);
    const publicBaseUrl = (c.publicBaseUrl ?? `http://localhost:${c.port}`).replace(/\/+$/, '');
    return {
      dataDir,
      publicBaseUrl,
      databaseUrl: c.databaseUrl ?? `pglite:${path.join(dataDir, 'pglite')}`,
      embedded: !c.databaseUrl || c.databaseUrl.startsWith('pglite:'),
      payUrl: (c.payUrl ?? `${publicBaseUrl}/pay`).replace(/\/+$/, ''),
      adminStateFile: path.join(dataDir, 'admin.json'),
    };
  },
);

export type CoreConfig = ConfigOf<typeof coreConfig>;
