// The pages' browser code and styles (src/web/client), bundled by esbuild into .build/web at `npm install` and
// `npm run build` (scripts/prepare-start.mjs), and kept in memory by the server. The browser gets small ES
// modules and one stylesheet per page: no build step in the browser, nothing from a CDN. A server started on
// sources newer than the bundle (a developer's checkout) rebuilds it first, as scripts/run.mjs does for the server.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WEB_OUT_DIR = path.join(ROOT, '.build', 'web');
const RECORD = 'inputs.json';

/** What the browser loads: JS modules and stylesheets, by output name. */
const ENTRIES = {
  checkout: 'src/web/client/checkout/main.ts',
  dashboard: 'src/web/client/dashboard/main.ts',
  'checkout-style': 'src/web/client/styles/checkout.css',
  'dashboard-style': 'src/web/client/styles/dashboard.css',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export interface WebAsset {
  body: Buffer;
  type: string;
  /** Content hash: `?v=<hash>` URLs are cached for good. */
  hash: string;
}

export interface WebAssets {
  get(name: string): WebAsset | undefined;
  /** The URL of an output (e.g. `checkout.js`) with its content hash. */
  url(name: string): string;
}

interface BuildRecord {
  startedAt: number;
  inputs: string[];
}

/** True when the bundle exists and none of the files it was built from changed since. */
export function webAssetsFresh(outDir = WEB_OUT_DIR): boolean {
  let record: BuildRecord;
  try {
    record = JSON.parse(fs.readFileSync(path.join(outDir, RECORD), 'utf8')) as BuildRecord;
  } catch {
    return false;
  }
  return record.inputs.every((input) => {
    const stat = fs.statSync(path.resolve(ROOT, input), { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs < record.startedAt;
  });
}

/** Bundles the pages' code in memory: every output by file name, and the record of what it was built from. */
async function bundle(): Promise<{ files: Map<string, Buffer>; record: BuildRecord }> {
  const { build } = await import('esbuild');
  const startedAt = Date.now();
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(ROOT, file)])),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: 'linked',
    outdir: WEB_OUT_DIR,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const files = new Map(result.outputFiles.map((f) => [path.basename(f.path), Buffer.from(f.contents)]));
  return { files, record: { startedAt, inputs: [...Object.keys(result.metafile.inputs), 'package-lock.json'] } };
}

/** Bundles the pages' code into `outDir`, written aside and renamed into place whole. */
export async function buildWebAssets(outDir = WEB_OUT_DIR): Promise<Map<string, Buffer>> {
  const { files, record } = await bundle();
  const scratch = `${outDir}.tmp-${process.pid}-${record.startedAt}`;
  fs.mkdirSync(scratch, { recursive: true });
  for (const [name, body] of files) fs.writeFileSync(path.join(scratch, name), body);
  fs.writeFileSync(path.join(scratch, RECORD), JSON.stringify(record));
  // Another build may run at the same moment: each puts its output in place whole, or leaves the other's.
  const old = `${outDir}.old-${process.pid}-${record.startedAt}`;
  try {
    fs.renameSync(outDir, old);
  } catch {
    // nothing there yet, or another build moved it
  }
  try {
    fs.renameSync(scratch, outDir);
  } catch {
    // another build got there first: its output is as good as ours
  }
  fs.rmSync(old, { recursive: true, force: true });
  fs.rmSync(scratch, { recursive: true, force: true });
  return files;
}

/** The built outputs; a read that meets another build's swap is tried again. */
function readBuilt(outDir: string): Map<string, Buffer> | null {
  for (let attempt = 1; ; attempt++) {
    try {
      if (!fs.existsSync(path.join(outDir, RECORD))) return null;
      return new Map(fs.readdirSync(outDir).map((name) => [name, fs.readFileSync(path.join(outDir, name))]));
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

/**
 * The outputs in memory: as built (fresh), or built now when stale and `buildIfStale` (then served from memory,
 * whatever another process does to the directory meanwhile); null when there are none.
 */
export async function loadWebAssets(options: { buildIfStale: boolean; outDir?: string }): Promise<WebAssets | null> {
  const outDir = options.outDir ?? WEB_OUT_DIR;
  // A stale bundle that cannot be rebuilt here (no esbuild, no generated documents) still beats no pages at all.
  const built =
    webAssetsFresh(outDir) || !options.buildIfStale ? readBuilt(outDir) : await buildWebAssets(outDir).catch((e: unknown) => readBuilt(outDir) ?? Promise.reject(e));
  if (!built) return null;
  const files = new Map<string, WebAsset>();
  for (const [name, body] of built) {
    const type = TYPES[path.extname(name)];
    if (type) files.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }
  return {
    get: (name) => files.get(name),
    url: (name) => `/assets/${name}?v=${files.get(name)?.hash ?? 'missing'}`,
  };
}
