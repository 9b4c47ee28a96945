// `npm start` (scripts/run.mjs) runs a bundle of src/bin/server.ts: rebuilt whenever a file it was built from changed
// after its build started, or is gone, so a start never runs stale code. (lifecycle.test.ts starts the real thing.)
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script
import { buildBundle, freshBundle } from '../../scripts/run.mjs';
import { tempDir } from '../support/processes.ts';

interface BuildRecord {
  entry: string;
  cwd: string;
  startedAt: number;
  inputs: string[];
}

describe('the start script’s bundle', { timeout: 60_000 }, () => {
  it('is reused while its inputs are unchanged, rebuilt when one changed after the build started or is gone', async () => {
    const out = tempDir('payrail-run-');
    const build = (): Promise<string> => buildBundle('src/bin/server.ts', out);
    const fresh = (): string | null => freshBundle('src/bin/server.ts', out);
    expect(fresh()).toBeNull();
    const bundle = await build();
    expect(fresh()).toBe(bundle);
    const recordFile = path.join(out, 'src_bin_server.inputs.json');
    const record = JSON.parse(fs.readFileSync(recordFile, 'utf8')) as BuildRecord;
    // Our sources, the generated client, the installed packages it bundles, and the lockfiles that show an install.
    expect(record.inputs).toEqual(expect.arrayContaining(['src/bin/server.ts', 'src/db/migrate.ts', 'generated/prisma/client.ts', 'package-lock.json']));
    expect(record.inputs.some((i) => i.includes('node_modules/graphql/'))).toBe(true);

    const rewrite = (change: Partial<BuildRecord>) => fs.writeFileSync(recordFile, JSON.stringify({ ...record, ...change }));
    // A source edited while the build ran (its mtime after the build's start).
    rewrite({ startedAt: fs.statSync(path.resolve(record.cwd, 'src/bin/server.ts')).mtimeMs });
    expect(fresh()).toBeNull();
    rewrite({ inputs: [...record.inputs, 'src/deleted-since.ts'] });
    expect(fresh()).toBeNull();
    rewrite({ entry: path.resolve('src/bin/merchant.ts') });
    expect(fresh()).toBeNull();
    rewrite({});
    expect(fresh()).toBe(bundle);
    fs.rmSync(bundle);
    expect(fresh()).toBeNull();
  });
});
