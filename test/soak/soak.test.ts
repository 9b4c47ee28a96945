// The chaos soak in the suite (docs/soak.md): a 30-second round of `npm run soak` (PostgreSQL, its own Redis, anvil,
// three servers, both workers, faults) must hold every invariant; and its proof: with both planted bugs and no
// faults, exactly the two invariants those bugs break fail (ledger:verify finds the missing fee journal, the
// duplicate bound the second delivery of each webhook), and the run exits 1. Each run is a child process tree of
// its own; the file runs them one after the other.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { ANVIL } from '../support/anvil.ts';
import { ROOT } from '../support/processes.ts';

const pgAdminUrl = inject('pgAdminUrl');
const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => fs.existsSync(p)) ?? null;
if (!REDIS_SERVER && process.env['CI']) throw new Error('redis-server not found: the soak runs its own (Debian package redis-server)');

const INVARIANTS = [
  'quiet reached',
  'acknowledged writes exist',
  'ledger:verify --mode test',
  'ledger:verify --mode live',
  'every committed event delivered at least once',
  'webhooks in order per endpoint within the pipeline window',
  'webhook duplicates within the documented bound',
  'resumed subscribers saw every change exactly once',
  'no withdrawal or refund paid twice on chain',
  'balances never negative',
];

async function soak(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts'], {
    cwd: ROOT,
    env: { ...process.env, SOAK_DATABASE_URL: pgAdminUrl!, PATH: `${process.env['PATH']}:/usr/bin`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

const verdict = (stdout: string, name: string) => new RegExp(`^(PASS|FAIL) ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `, 'm').exec(stdout)?.[1];
const total = (stdout: string, what: string) => Number(new RegExp(`^TOTAL ${what} (\\d+)`, 'm').exec(stdout)?.[1] ?? NaN);

describe.runIf(pgAdminUrl && ANVIL && REDIS_SERVER)('the chaos soak', () => {
  it('a 30-second round under faults holds every invariant', { timeout: 600_000 }, async () => {
    const run = await soak({ SOAK_SECONDS: '30', SOAK_ACTORS: '3' });
    const report = `${run.stdout}\n${run.stderr.slice(-4000)}`;
    expect(run.code, report).toBe(0);
    for (const name of INVARIANTS) expect(verdict(run.stdout, name), `${name}\n${report}`).toBe('PASS');
    expect(run.stdout).not.toMatch(/^FAIL /m);
    expect(run.stdout).toMatch(/^SOAK seed \d+ \(replay: SOAK_SEED=\d+\)/m);
    expect(total(run.stdout, 'operations')).toBeGreaterThan(0);
    expect(total(run.stdout, 'faults')).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/^TOTAL elapsed /m);
  });

  it('fails on the planted bugs, each on the invariant it breaks', { timeout: 600_000 }, async () => {
    const run = await soak({ SOAK_SECONDS: '12', SOAK_ACTORS: '2', SOAK_FAULTS: '0', SOAK_PLANT: 'skip-journal,double-deliver' });
    const report = `${run.stdout}\n${run.stderr.slice(-4000)}`;
    expect(run.code, report).toBe(1);
    // The fee journal left out: test-mode invoices are paid in every round of this length.
    expect(verdict(run.stdout, 'ledger:verify --mode test'), report).toBe('FAIL');
    expect(run.stdout).toMatch(/^FAIL ledger:verify --mode test: .*done without its fee journal/m);
    // Every webhook sent twice, with no fault that could excuse a single duplicate (bound 0).
    expect(verdict(run.stdout, 'webhook duplicates within the documented bound'), report).toBe('FAIL');
    for (const name of INVARIANTS.filter((n) => !n.startsWith('ledger:verify') && n !== 'webhook duplicates within the documented bound')) {
      expect(verdict(run.stdout, name), `${name}\n${report}`).toBe('PASS');
    }
    expect(total(run.stdout, 'faults')).toBe(0);
    // A failed run keeps its database to read what happened (docs/soak.md); this one has been read: dropped here.
    const kept = /^SOAK database kept: (payrail_soak_[0-9a-f]+) /m.exec(run.stdout)?.[1];
    expect(kept, report).toBeDefined();
    const admin = new pg.Client({ connectionString: pgAdminUrl! });
    await admin.connect();
    try {
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [kept])).rowCount).toBe(1);
      await admin.query(`DROP DATABASE IF EXISTS ${kept!} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });
});
