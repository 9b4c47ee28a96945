import type { SerializedError } from 'vitest';
import type { Reporter, TestModule, TestRunEndReason, Vitest } from 'vitest/node';

/** The services besides PostgreSQL whose tests skip without them: the key test/global-setup.ts provides, the name in the line, the words when missing. */
const SERVICES = [
  ['redisUrl', 'redis', 'REDIS SKIPPED: set TEST_REDIS_URL'],
  ['chromium', 'chromium', 'BROWSER SKIPPED: install chromium'],
  ['litecoind', 'litecoind', 'LITECOIND SKIPPED: install litecoind or set TEST_LITECOIND'],
  ['anvil', 'anvil', 'ANVIL SKIPPED: npm ci installs it with @foundry-rs/anvil'],
] as const;

/**
 * One plain closing line CI tools can read, which agrees with vitest's exit status: failed tests, errors in
 * hooks and files (a failing beforeAll leaves its tests "skipped"), unhandled errors, and which services the
 * tests ran with (each one that was missing is named SKIPPED: its tests did not run).
 */
export default class SummaryReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    let errors = unhandledErrors.length;
    let failedFiles = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') count.failed++;
        else count.skipped++;
      }
      errors += module.errors().length;
      for (const suite of module.children.allSuites()) errors += suite.errors().length;
      if (module.state() === 'failed') failedFiles++;
    }
    const provided = (this.vitest?.getProvidedContext() ?? {}) as Partial<Record<'pgTemplate' | (typeof SERVICES)[number][0], string | null>>;
    const services =
      (provided.pgTemplate ? 'pglite + postgres' : 'pglite only (POSTGRES SKIPPED: set TEST_DATABASE_URL)') +
      SERVICES.map(([key, name, skipped]) => (provided[key] ? ` + ${name}` : ` (${skipped})`)).join('');
    const ok = reason === 'passed' && count.failed === 0 && errors === 0 && failedFiles === 0;
    process.stdout.write(
      `\nTests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped; ` +
        `${failedFiles} files failed, ${errors} errors outside tests; services: ${services}; result: ${ok ? 'PASSED' : 'FAILED'}\n`,
    );
  }
}
