#!/usr/bin/env node
// `node scripts/run.mjs src/bin/server.ts [args]` (what `npm start` runs): the entry point from one esbuild bundle in
// .build/run/, rebuilt whenever one of the files it was built from changed, instead of tsx compiling and resolving
// its modules on every start (docs/operations.md, "Start-up time").
// Without esbuild (installed without dev dependencies) or a writable .build/, it runs under tsx as before.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// Two levels below the root, like src/<dir>/: relative paths in the sources (../../prisma/migrations) still resolve.
const OUT_DIR = path.join(ROOT, ".build", "run");

export const EXTERNAL = ["@electric-sql/pglite", "pglite-prisma-adapter", "@prisma/*", "prisma", "pg", "pg-native", "pino", "ws", "bufferutil", "utf-8-validate", "esbuild", "ccxt"];

/** The bundle of `entry` if none of the files it was built from changed since, else null. */
export function freshBundle(entry, outDir = OUT_DIR) {
  const name = bundleName(entry);
  let record;
  try {
    record = JSON.parse(fs.readFileSync(path.join(outDir, `${name}.inputs.json`), "utf8"));
  } catch {
    return null;
  }
  const bundle = path.join(outDir, `${name}.mjs`);
  if (record.entry !== path.resolve(ROOT, entry) || !fs.existsSync(bundle)) return null;
  for (const input of record.inputs) {
    // Edited during or after the build, or gone.
    const stat = fs.statSync(path.resolve(record.cwd, input), { throwIfNoEntry: false });
    if (!stat || stat.mtimeMs >= record.startedAt) return null;
  }
  return bundle;
}

const bundleName = (entry) => path.relative(ROOT, path.resolve(ROOT, entry)).replace(/\.[cm]?ts$/, "").replace(/[\\/]/g, "_");

/** Bundles `entry` (packages stay external) and records its inputs; returns the bundle's path. */
export async function buildBundle(entry, outDir = OUT_DIR) {
  const { build } = await import("esbuild");
  const name = bundleName(entry);
  const startedAt = Date.now();
  fs.mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [path.resolve(ROOT, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Plain-JS packages go into the bundle: loading them as ~1,000 separate modules was half of the start's
    // module loading. Left out: packages that read files beside themselves (wasm, data, worker scripts) or load
    // optional native addons, and ccxt (tens of megabytes, imported only when RATES_CONFIG names an exchange).
    // graphql is bundled together with everything that uses it (one realm).
    external: EXTERNAL,
    // Bundled CommonJS code requires node builtins.
    banner: { js: 'import { createRequire as __payrailCreateRequire } from "node:module"; const require = __payrailCreateRequire(import.meta.url);' },
    sourcemap: "linked",
    sourcesContent: false, // stack traces need positions only: a 3x smaller map to read at start
    metafile: true,
    write: false,
    outfile: path.join(outDir, `${name}.mjs`),
    logLevel: "warning",
  });
  // Written aside and renamed: a start running at the same moment sees the old bundle or the new one, whole.
  const suffix = `.tmp-${process.pid}`;
  for (const file of result.outputFiles) {
    fs.writeFileSync(file.path + suffix, file.contents);
    fs.renameSync(file.path + suffix, file.path);
  }
  // npm gives installed files a fixed old mtime: an install shows in its lockfiles instead.
  const installs = ["package.json", "package-lock.json", "node_modules/.package-lock.json"].filter((f) => fs.existsSync(path.join(ROOT, f)));
  const inputs = [...Object.keys(result.metafile.inputs), ...installs.map((f) => path.relative(process.cwd(), path.join(ROOT, f)))];
  const record = { entry: path.resolve(ROOT, entry), cwd: process.cwd(), startedAt, inputs };
  fs.writeFileSync(path.join(outDir, `${name}.inputs.json${suffix}`), JSON.stringify(record));
  fs.renameSync(path.join(outDir, `${name}.inputs.json${suffix}`), path.join(outDir, `${name}.inputs.json`));
  return path.join(outDir, `${name}.mjs`);
}

async function bundleOrNull(entry) {
  try {
    return freshBundle(entry) ?? (await buildBundle(entry));
  } catch (e) {
    if (process.env.PAYRAIL_RUN_DEBUG) console.error(`scripts/run.mjs: running ${entry} under tsx: ${e?.stack ?? e}`);
    return null;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const entry = process.argv[2];
  if (!entry) {
    console.error("usage: node scripts/run.mjs <entry.ts> [args...]");
    process.exit(2);
  }
  process.argv.splice(1, 2, path.resolve(ROOT, entry)); // the entry sees the argv it would under tsx
  const bundle = await bundleOrNull(entry);
  if (bundle) {
    process.setSourceMapsEnabled(true); // stack traces name the sources, as under tsx
    await import(pathToFileURL(bundle).href);
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    await import(pathToFileURL(path.resolve(ROOT, entry)).href);
  }
}
