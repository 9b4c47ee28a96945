// The service's configuration from the environment. The shared part is defined here; each feature defines its
// own section next to its code (src/<feature>/config.ts) and is listed once below.
import type { ConfigOf } from './core/config-section.ts';
import { autoswapConfig } from './autoswap/config.ts';
import { coreConfig, type CoreConfig } from './core/settings.ts';
import { emailConfig } from './emails/config.ts';
import { exportConfig } from './exports/config.ts';
import { invoiceConfig } from './invoices/config.ts';
import { paymentLinkConfig } from './payment-links/config.ts';
import { webhookConfig } from './webhooks/config.ts';
import { withdrawalConfig } from './withdrawals/config.ts';

/** Every feature section, under the name the configuration carries it. */
const featureSections = { invoices: invoiceConfig, webhooks: webhookConfig, withdrawals: withdrawalConfig, exports: exportConfig, emails: emailConfig, paymentLinks: paymentLinkConfig, autoswap: autoswapConfig } as const;

export type Config = CoreConfig & { [K in keyof typeof featureSections]: ConfigOf<(typeof featureSections)[K]> };

/** The names of every environment variable the service reads. */
export const CONFIG_VARIABLES = [coreConfig, ...Object.values(featureSections)].flatMap((s) => Object.keys(s.shape));

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
  const present = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const problems: string[] = [];
  const read = (section: { read(env: Record<string, string>): { ok: true; value: unknown } | { ok: false; problems: string[] } }): unknown => {
    const r = section.read(present);
    if (r.ok) return r.value;
    problems.push(...r.problems);
    return undefined;
  };
  const core = read(coreConfig);
  const features = Object.fromEntries(Object.entries(featureSections).map(([name, section]) => [name, read(section)]));
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return { ...(core as object), ...features } as Config;
}
