// The embedded database's directory lock under races: several processes start at the same instant, after a
// crash left a stale lock or on a clean directory; exactly one of them gets the lock every time.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, currentLock, DatabaseInUseError } from '../../src/db/pglite-lock.ts';
import { ROOT, tempDir } from '../support/processes.ts';

const RACERS = 3;
const ROUNDS = 2;

const RACER = `
const { acquireLock } = await import(${JSON.stringify(path.join(ROOT, 'src/db/pglite-lock.ts'))});
const [dir, at] = [process.argv[1], Number(process.argv[2])];
while (Date.now() < at) {} // all racers leave the line together
try {
  const lock = acquireLock(dir, 'racer');
  process.stdout.write('GOT ' + (lock.abandonedBy?.pid ?? '-'));
  setTimeout(() => lock.release(), 1000);
} catch (e) {
  process.stdout.write('REFUSED ' + e.name);
}`;

async function race(dir: string): Promise<string[]> {
  const at = Date.now() + 1500;
  return Promise.all(
    Array.from({ length: RACERS }, () => new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER, dir, String(at)], { cwd: ROOT });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.on('close', () => resolve(out.trim()));
    })),
  );
}

/** The pid of a process that has exited. */
const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

describe('the embedded database directory lock', { timeout: 60_000 }, () => {
  it('of processes racing for a stale lock (or none), exactly one gets it, and only it reports the unclean shutdown', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = tempDir('payrail-lockrace-');
      const stale = round % 2 === 0;
      const dead = deadPid();
      if (stale) fs.writeFileSync(path.join(dir, 'payrail.lock.7'), JSON.stringify({ pid: dead, role: 'server', since: '2026-01-01T00:00:00.000Z' }));
      const outcomes = await race(dir);
      const got = outcomes.filter((o) => o.startsWith('GOT'));
      expect(got, `round ${round}: ${outcomes.join(' / ')}`).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'REFUSED DatabaseInUseError')).toHaveLength(RACERS - 1);
      expect(got[0]).toBe(stale ? `GOT ${dead}` : 'GOT -');
    }
  });

  it('a clean release leaves a released mark, not an abandoned lock; a second open in one process is refused', () => {
    const dir = tempDir('payrail-lock-');
    const first = acquireLock(dir, 'test');
    expect(first.abandonedBy).toBeNull();
    expect(() => acquireLock(dir, 'test again')).toThrow(DatabaseInUseError);
    first.release();
    expect(currentLock(dir)).toMatchObject({ pid: process.pid, released: true });
    const second = acquireLock(dir, 'test');
    expect(second.abandonedBy).toBeNull();
    second.release();
    // Only the newest generation is kept.
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('payrail.lock'))).toHaveLength(1);
  });
});
