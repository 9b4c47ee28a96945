// The entry points refuse bad input before touching any database: merchant CLI usage, bad configuration.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { launch, stopAllChildren, tempDir, waitForExit } from '../support/processes.ts';
import { cli } from '../support/server-env.ts';

afterAll(() => stopAllChildren());

describe('merchant CLI usage', { timeout: 60_000 }, () => {
  it('rejects bad usage with the usage text, before opening any database', async () => {
    const env = { DATA_DIR: tempDir('payrail-usage-') };
    const cases: [string[], string][] = [
      [['frob'], 'unknown command frob'],
      [[], 'usage:'],
      [['create'], '--name is required'],
      [['create', '--logo-url', 'https://acme.example/x.png'], '--name is required'],
      [['rotate-token'], '--company-id is required'],
      [['rotate-secret'], '--company-id is required'],
      [['rotate-token', '--company-id', '00000000-0000-4000-8000-000000000000'], '--mode test or --mode live is required'],
      [['rotate-secret', '--company-id', '00000000-0000-4000-8000-000000000000', '--mode', 'prod'], '--mode must be test or live'],
      [['list', '--bogus'], "Unknown option '--bogus'"],
    ];
    for (const [args, message] of cases) {
      const r = await cli(env, ...args);
      expect(r.code, `merchant ${args.join(' ')}`).toBe(2);
      expect(r.stderr, `merchant ${args.join(' ')}`).toContain('usage:');
      expect(r.stderr, `merchant ${args.join(' ')}`).toContain(message);
      expect(r.stdout).toBe('');
    }
    expect(fs.readdirSync(env.DATA_DIR)).toEqual([]);
  });
});

describe('bad configuration', { timeout: 60_000 }, () => {
  const cases: { name: string; env: Record<string, string>; names: string[] }[] = [
    { name: 'PORT=notaport', env: { PORT: 'notaport' }, names: ['PORT'] },
    {
      name: 'several bad variables at once',
      env: { PORT: '70000', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', RATES_FILE: '', WEBHOOK_LEASE_MS: '1e400' },
      names: ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'WEBHOOK_LEASE_MS'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: exits 1 naming the variable, without starting`, async () => {
      const dataDir = tempDir('payrail-badconfig-');
      const proc = launch('src/bin/server.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...c.env });
      const exit = await waitForExit(proc, 30_000);
      expect(exit.code, proc.stderr).toBe(1);
      for (const name of c.names) expect(proc.stderr).toMatch(new RegExp(`^\\s*${name}: `, 'm'));
      expect(proc.stdout).toBe('');
      // Nothing was created: no database, no admin state file.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    });
  }
});
