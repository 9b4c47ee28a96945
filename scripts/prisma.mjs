#!/usr/bin/env node
// `node scripts/prisma.mjs <args>` == `prisma <args>`, but offline: unless PRISMA_SCHEMA_ENGINE_BINARY is already
// set (e.g. to a native schema-engine by someone with internet access), point it at the wasm engine shim,
// so the CLI neither downloads nor needs the native schema-engine binary.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(here, "prisma-schema-engine.mjs");
// Generators such as prisma-pothos-types are found on PATH, as under `npm run`.
env.PATH = `${path.resolve(here, "..", "node_modules", ".bin")}${path.delimiter}${env.PATH ?? ""}`;
env.CHECKPOINT_DISABLE ??= "1"; // no update/telemetry check (no network here)
env.PRISMA_HIDE_UPDATE_MESSAGE ??= "1";
const cli = path.join(path.dirname(require.resolve("prisma/package.json")), "build", "index.js");
const r = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { stdio: "inherit", env });
process.exit(r.status ?? 1);
