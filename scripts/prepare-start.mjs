#!/usr/bin/env node
// Run by postinstall (and by hand after changing migrations): builds what makes `npm start` fast, in .build/: the
// server's bundle and the template new embedded databases are copied from (docs/operations.md, "Start-up time"). Failing here never fails an install: the server
// then starts the slow way.
import { tsImport } from "tsx/esm/api";

const started = performance.now();
try {
  const { buildBundle } = await import("./run.mjs");
  await buildBundle("src/main.ts");
} catch (e) {
  console.error(`payrail: could not bundle src/main.ts (npm start will build it, or use tsx): ${e?.message ?? e}`);
}
try {
  const { buildPgliteTemplate } = await tsImport("../src/db/client.ts", import.meta.url);
  const { dir, built } = await buildPgliteTemplate();
  console.error(`payrail: embedded database template ${built ? "built" : "up to date"} in ${dir} (${Math.round(performance.now() - started)} ms)`);
} catch (e) {
  console.error(`payrail: could not build the embedded database template (new databases will run initdb): ${e?.stack ?? e}`);
}
