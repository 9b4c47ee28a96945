// The fault injector: one fault at a time, each chosen, aimed and timed by the seeded stream: kill -9 of a server
// instance or a worker (started again after a pause), pg_terminate_backend of some of the soak database's
// sessions, a restart of the soak's Redis, a webhook receiver that hangs or fails (500) for a few seconds.
import pg from 'pg';
import type { SoakRedis } from './infra.ts';
import type { Ledger, Tenant } from './model.ts';
import type { Supervised } from './procs.ts';
import type { Rng } from './rng.ts';

export interface FaultTargets {
  processes: Supervised[];
  redis: SoakRedis;
  adminUrl: string;
  database: string;
  /** Receivers the injector may make hang or fail: test mode's, whose retries the quiet phase can hasten. */
  receivers: Tenant[];
  ledger: Ledger;
  log(line: string): void;
}

export const CHECKER_APPLICATION = 'payrail-soak-checker';

export async function injectFaults(rng: Rng, targets: FaultTargets, running: () => boolean, everyMs: [number, number]): Promise<void> {
  const admin = new pg.Client({ connectionString: targets.adminUrl, application_name: 'payrail-soak-injector' });
  admin.on('error', () => undefined);
  await admin.connect();
  const episodes: Promise<void>[] = [];
  try {
    while (running()) {
      await new Promise((r) => setTimeout(r, rng.int(everyMs[0], everyMs[1])));
      if (!running()) break;
      const kind = rng.weighted({ kill: 45, 'pg-terminate': 25, 'redis-restart': 8, 'receiver-hang': 11, 'receiver-failing': 11 });
      if (kind === 'kill') {
        const proc = rng.pick(targets.processes);
        if (!proc.alive || proc.starting) continue;
        // One server instance down at a time: the proxy always has somewhere to send the load.
        if (proc.name.startsWith('server') && targets.processes.some((p) => p.name.startsWith('server') && (!p.alive || p.starting))) continue;
        targets.ledger.faults.add(`kill -9 ${proc.name.replace(/-\d+$/, '')}`);
        targets.log(`fault: kill -9 ${proc.name}`);
        await proc.kill();
        // Started again in the background: the next fault does not wait for a slow start.
        const downMs = rng.int(200, 1_500);
        episodes.push(
          new Promise((r) => setTimeout(r, downMs))
            .then(() => proc.start())
            // Once more: a start can fail while the database sessions are being terminated.
            .catch(() => proc.start())
            .catch((e: Error) => targets.log(`restart of ${proc.name} failed: ${e.message.split('\n')[0]}`)),
        );
      } else if (kind === 'pg-terminate') {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2 AND backend_type = 'client backend'`,
          [targets.database, CHECKER_APPLICATION],
        );
        const victims = rows.filter(() => rng.chance(0.25)).slice(0, 4);
        if (victims.length === 0 && rows.length) victims.push(rng.pick(rows));
        for (const v of victims) await admin.query('SELECT pg_terminate_backend($1)', [v.pid]);
        targets.ledger.faults.add('pg_terminate_backend');
        targets.ledger.sessionsTerminated += victims.length;
        targets.log(`fault: pg_terminate_backend of ${victims.length} of ${rows.length} sessions`);
      } else if (kind === 'redis-restart') {
        targets.ledger.faults.add('redis restart');
        targets.log('fault: redis restart');
        await targets.redis.restart(rng.int(200, 1_500));
      } else {
        const t = rng.pick(targets.receivers);
        if (t.receiver.episode) continue;
        const episode = kind === 'receiver-hang' ? 'hanging' : 'failing';
        targets.ledger.faults.add(`receiver ${episode}`);
        targets.log(`fault: receiver ${t.label} ${episode}`);
        t.receiver.episode = episode;
        const ms = rng.int(2_000, 6_000);
        episodes.push(new Promise<void>((r) => setTimeout(() => r(), ms)).then(() => void (t.receiver.episode = null)));
      }
    }
  } finally {
    await Promise.all(episodes);
    await admin.end();
  }
}
