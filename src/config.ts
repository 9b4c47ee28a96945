import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ });

const envSchema = z.object({
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
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(10_000_000).default(262_144),
  RATES_FILE: z.string().min(1).optional(),
  FEES_FILE: z.string().min(1).optional(),
  GRAPHIQL: z.enum(['0', '1']).default('1'),
  GRAPHQL_INTROSPECTION: z.enum(['0', '1']).default('1'),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_PORT: port.default(0),
  /** Guards the admin API; generated per start and written to the admin state file when unset. */
  ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** Simulated chain + test clock. On unless set to 0 (no real chain node is configurable yet). */
  SANDBOX: z.enum(['0', '1']).default('1'),
  /** Sends the sandbox chain refuses before it accepts one (a node outage, to see queued refunds retried). */
  SANDBOX_SEND_FAILURES: z.coerce.number().int().min(0).max(1_000_000).default(0),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5_000),
  REFUND_RETRY_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  WEBHOOK_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** Attempts per endpoint started and not yet recorded, at most (1: strictly one at a time). */
  WEBHOOK_PIPELINE: z.coerce.number().int().min(1).max(64).default(4),
  /** PostgreSQL connections of the webhook worker's own (0: it shares the server's pool). */
  WEBHOOK_DB_POOL_SIZE: z.coerce.number().int().min(0).max(50).default(2),
  /** How long a worker's claim on a delivery holds; must outlast one attempt. Default: timeout + 20 s. */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(200).max(3_600_000).optional(),
  /** Lets webhooks reach private, loopback and link-local addresses (tests, private deployments). */
  WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** How often finished deliveries past retention are deleted. */
  WEBHOOK_PRUNE_INTERVAL_MS: z.coerce.number().int().min(100).max(86_400_000).default(3_600_000),
  /** 0: deliver from a separate `npm run webhooks:worker` process instead of inside the server. */
  WEBHOOK_WORKER: z.enum(['0', '1']).default('1'),
});

/** The names of every environment variable the service reads. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  embedded: boolean;
  dataDir: string;
  publicBaseUrl: string;
  payUrl: string;
  logLevel: string;
  dbPoolSize: number;
  bodyLimitBytes: number;
  ratesFile?: string;
  feesFile?: string;
  graphiql: boolean;
  introspection: boolean;
  adminHost: string;
  adminPort: number;
  adminToken?: string;
  adminStateFile: string;
  shutdownTimeoutMs: number;
  sandbox: boolean;
  sandboxSendFailures: number;
  sweepIntervalMs: number;
  refundRetryIntervalMs: number;
  webhooks: {
    timeoutMs: number;
    concurrency: number;
    batchSize: number;
    pollMs: number;
    pipeline: number;
    dbPoolSize: number;
    leaseMs: number;
    allowPrivate: boolean;
    retentionDays: number;
    pruneIntervalMs: number;
    inProcess: boolean;
  };
}

export class ConfigError extends Error {}

/** For process entry points: the configuration, or every problem on stderr and exit code 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}

/** Reads and validates the environment; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.WEBHOOK_LEASE_MS !== undefined && e.WEBHOOK_LEASE_MS <= e.WEBHOOK_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration:\n  WEBHOOK_LEASE_MS: must be longer than WEBHOOK_TIMEOUT_MS');
  }
  const dataDir = path.resolve(e.DATA_DIR);
  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL ?? `pglite:${path.join(dataDir, 'pglite')}`,
    embedded: !e.DATABASE_URL || e.DATABASE_URL.startsWith('pglite:'),
    dataDir,
    publicBaseUrl,
    payUrl: (e.PAY_URL ?? `${publicBaseUrl}/pay`).replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    dbPoolSize: e.DB_POOL_SIZE,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    ratesFile: e.RATES_FILE,
    feesFile: e.FEES_FILE,
    graphiql: e.GRAPHIQL === '1',
    introspection: e.GRAPHQL_INTROSPECTION === '1',
    adminHost: e.ADMIN_HOST,
    adminPort: e.ADMIN_PORT,
    adminToken: e.ADMIN_TOKEN,
    adminStateFile: path.join(dataDir, 'admin.json'),
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    sandbox: e.SANDBOX === '1',
    sandboxSendFailures: e.SANDBOX_SEND_FAILURES,
    sweepIntervalMs: e.SWEEP_INTERVAL_MS,
    refundRetryIntervalMs: e.REFUND_RETRY_INTERVAL_MS,
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      batchSize: e.WEBHOOK_BATCH_SIZE,
      pollMs: e.WEBHOOK_POLL_MS,
      pipeline: e.WEBHOOK_PIPELINE,
      dbPoolSize: e.WEBHOOK_DB_POOL_SIZE,
      leaseMs: e.WEBHOOK_LEASE_MS ?? e.WEBHOOK_TIMEOUT_MS + 20_000,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === '1',
      retentionDays: e.WEBHOOK_RETENTION_DAYS,
      pruneIntervalMs: e.WEBHOOK_PRUNE_INTERVAL_MS,
      inProcess: e.WEBHOOK_WORKER === '1',
    },
  };
}
