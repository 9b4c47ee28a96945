// The closing line agrees with vitest's exit status: a failing test fails the run, and so do a failing beforeAll or a
// file that does not load although no test "failed"; it names every service the tests ran with, and each one missing.
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.ts';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

function runFixtures(...files: string[]) {
  return runWith('vitest.config.ts', ...files);
}

function runWith(config: string, ...files: string[]) {
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const r = spawnSync(process.execPath, [vitest, 'run', '--config', `test/fixtures/reporter/${config}`, ...files], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    timeout: 60_000,
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('Tests: ')) ?? '';
  return { code: r.status, line };
}

describe('the closing line', () => {
  it('a passing run: PASSED, exit 0, every missing service named SKIPPED', () => {
    const { code, line } = runFixtures('passing');
    expect(code).toBe(0);
    expect(line).toBe(
      'Tests: 1 passed, 0 failed, 1 skipped; 0 files failed, 0 errors outside tests; services: pglite only (POSTGRES SKIPPED: set TEST_DATABASE_URL) ' +
        '(REDIS SKIPPED: set TEST_REDIS_URL) (BROWSER SKIPPED: install chromium) (LITECOIND SKIPPED: install litecoind or set TEST_LITECOIND) ' +
        '(ANVIL SKIPPED: npm ci installs it with @foundry-rs/anvil); result: PASSED',
    );
  });

  it('a run with every service: each one named', () => {
    const { code, line } = runWith('vitest.services.config.ts', 'passing');
    expect(code).toBe(0);
    expect(line).toBe(
      'Tests: 1 passed, 0 failed, 1 skipped; 0 files failed, 0 errors outside tests; services: pglite + postgres + redis + chromium + litecoind + anvil; result: PASSED',
    );
  });

  it('a failing test: FAILED, exit 1, the test counted', () => {
    const { code, line } = runFixtures('passing', 'failing-test');
    expect(code).toBe(1);
    expect(line).toMatch(/^Tests: 1 passed, 1 failed, 1 skipped; 1 files failed, 0 errors outside tests; services: .*; result: FAILED$/);
  });

  it('a failing beforeAll and a file that does not load: FAILED, exit 1, though no test failed', () => {
    const { code, line } = runFixtures('passing', 'failing-hook', 'failing-file');
    expect(code).toBe(1);
    expect(line).toMatch(/^Tests: 1 passed, 0 failed, 2 skipped; 2 files failed, [1-9]\d* errors outside tests; .*result: FAILED$/);
  });
});
