// Readiness: whether this instance should get traffic. Each check has its own deadline, so the answer never hangs;
// probes that arrive while an evaluation runs share it, so a flood of probes costs one database round trip.
import type { Chains } from '../chains/registry.ts';
import type { JobRunner } from '../core/jobs.ts';
import { boundedRead, type Db } from '../db/client.ts';
import { localMigrations, unappliedMigrations, type LocalMigration } from '../db/migrate.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { withDeadline } from './metrics.ts';

/** How long one check may take before it counts as failing. */
export const CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessCheck {
  name: string;
  /**
   * Resolves with null when fine, or why not; a throw or the deadline counts as failing too. `{degraded}`: part of
   * the service is unavailable but the instance should keep its traffic (a currency without a rate).
   */
  run(timeoutMs: number): Promise<string | null | { degraded: string }>;
}

export interface CheckResult {
  name: string;
  state: 'ok' | 'degraded' | 'failing';
  /** Why it fails (for operators: the admin listener shows it; the public one does not). */
  detail: string | null;
}

export interface ReadinessReport {
  ready: boolean;
  checks: CheckResult[];
}

export class Readiness {
  private running: Promise<ReadinessReport> | null = null;

  constructor(
    private readonly checks: ReadinessCheck[],
    private readonly timeoutMs = CHECK_TIMEOUT_MS,
  ) {}

  evaluate(): Promise<ReadinessReport> {
    this.running ??= this.evaluateNow().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async evaluateNow(): Promise<ReadinessReport> {
    const checks = await Promise.all(
      this.checks.map(async ({ name, run }): Promise<CheckResult> => {
        try {
          const problem = await withDeadline(run(this.timeoutMs), this.timeoutMs, `the ${name} check`);
          if (problem !== null && typeof problem === 'object') return { name, state: 'degraded', detail: problem.degraded };
          return { name, state: problem === null ? 'ok' : 'failing', detail: problem };
        } catch (e) {
          return { name, state: 'failing', detail: e instanceof Error ? e.message : String(e) };
        }
      }),
    );
    return { ready: checks.every((c) => c.state !== 'failing'), checks };
  }
}

/** The database answers a query. */
export const databaseCheck = (db: Db): ReadinessCheck => ({
  name: 'database',
  run: async (timeoutMs) => {
    await boundedRead(db, timeoutMs, Prisma.sql`SELECT 1 AS "ok"`);
    return null;
  },
});

/** Every migration of prisma/migrations is applied (their list is read once, at start). */
export const migrationsCheck = (db: Db, local: LocalMigration[] = localMigrations()): ReadinessCheck => ({
  name: 'migrations',
  run: async (timeoutMs) => {
    const missing = await unappliedMigrations((sql) => boundedRead(db, timeoutMs, Prisma.raw(sql)), local);
    return missing.length ? `not applied: ${missing.join(', ')}` : null;
  },
});

/** Every background job (sweepers, senders, the webhook worker, chain watchers) is running. */
export const jobsCheck = (jobs: JobRunner): ReadinessCheck => ({
  name: 'jobs',
  run: async () => {
    const stopped = jobs.jobs.filter((j) => !j.running()).map((j) => j.name);
    return stopped.length ? `stopped: ${stopped.join(', ')}` : null;
  },
});

/**
 * Every real chain node not marked optional answers: its watcher's last scan (or lease check) succeeded. No call to
 * the node here: the watcher polls it anyway, and a probe must not multiply node calls.
 */
export const chainsCheck = (chains: Chains): ReadinessCheck => ({
  name: 'chains',
  run: async () => {
    const down = chains
      .health()
      .filter((c) => c.live === 'node' && !chains.isOptional(c.network) && c.state !== 'ok')
      .map((c) => `${c.network} ${c.state}${c.node ? ` at ${c.node}` : ''}${c.detail ? ` (${c.detail})` : ''}`);
    return down.length ? down.join('; ') : null;
  },
});
