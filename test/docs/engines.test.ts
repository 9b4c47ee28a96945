// The supported Node version is one fact: package.json's engines, the SDK's, and what README.md and the SDK guide say
// agree, and every installed package of the lock file accepts it (no EBADENGINE from `npm ci` on the oldest supported
// Node nor on the one running the suite).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// semver ships no types; these two functions are all the test uses.
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

const root = path.resolve(import.meta.dirname, '../..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, any>;

interface LockFile {
  packages: Record<string, { engines?: Record<string, string> | string[] }>;
}

/** The installed packages of a lock file whose `engines.node` refuses `version`, as `path (range)`. */
function engineConflicts(lock: LockFile, version: string, installed: (packagePath: string) => boolean): string[] {
  return Object.entries(lock.packages).flatMap(([packagePath, entry]) => {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.['node'];
    if (!packagePath || !range || !installed(packagePath)) return [];
    return semver.satisfies(version, range) ? [] : [`${packagePath} (${range})`];
  });
}

describe('the supported Node version', () => {
  const range = readJson('package.json')['engines'].node as string;
  const oldest = semver.minVersion(range)!.version;

  it('is the same in package.json, the SDK, README.md and the SDK guide', () => {
    expect(range).toMatch(/^>=\d+\.\d+\.\d+$/);
    expect(readJson('sdk/package.json')['engines'].node).toBe(range);
    const shown = oldest.replace(/\.0$/, '');
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain(`Node.js >= ${shown} `);
    expect(fs.readFileSync(path.join(root, 'sdk/README.md'), 'utf8')).toContain(`Node >= ${shown},`);
  });

  it('every installed package accepts the oldest supported Node and the running one', () => {
    const lock = readJson('package-lock.json') as LockFile;
    const installed = (p: string) => fs.existsSync(path.join(root, p, 'package.json'));
    // A floor, so a lock file read wrongly cannot pass: hundreds of installed packages declare a Node range.
    expect(Object.entries(lock.packages).filter(([p, e]) => p && e.engines && installed(p)).length).toBeGreaterThan(100);
    expect(engineConflicts(lock, oldest, installed)).toEqual([]);
    expect(engineConflicts(lock, process.versions.node, installed)).toEqual([]);
  });

  it('finds a planted package that wants a newer Node, as @prisma/streams-local does', () => {
    const planted: LockFile = {
      packages: {
        '': { engines: { node: '>=20.19.0' } },
        'node_modules/a': { engines: { node: '^12.20.0 || ^14.13.1 || >=16.0.0' } },
        'node_modules/@prisma/streams-local': { engines: { bun: '>=1.2.0', node: '>=22.0.0' } },
        'node_modules/not-installed': { engines: { node: '>=24' } },
      },
    };
    expect(engineConflicts(planted, '20.19.0', (p) => p !== 'node_modules/not-installed')).toEqual(['node_modules/@prisma/streams-local (>=22.0.0)']);
    expect(engineConflicts(planted, '22.0.0', () => true)).toEqual(['node_modules/not-installed (>=24)']);
  });
});
