#!/usr/bin/env node
// Run by postinstall and `npm run build` (and by hand after changing migrations): builds what `npm start` serves
// and what makes it fast, in .build/: the server's bundle, the checkout page and dashboard, and the template new
// embedded databases are copied from (docs/operations.md, "Start-up time"). Failing here never fails an install: the server
// then starts the slow way.
import { tsImport } from "tsx/esm/api";

const started = performance.now();
try {
  const { buildBundle } = await import("./run.mjs");
  await buildBundle("src/bin/server.ts");
} catch (e) {
  console.error(`payrail: could not bundle src/bin/server.ts (npm start will build it, or use tsx): ${e?.message ?? e}`);
}
try {
  // The checkout page and the dashboard: their typed GraphQL documents (codegen), then their bundle. Both tools are
  // dev dependencies: an install without them serves no pages (503) until `npm run build` runs with them.
  const { generate } = await import("@graphql-codegen/cli");
  const { default: config } = await tsImport("../codegen.ts", import.meta.url);
  await generate({ ...config, silent: true }, true);
  const { buildWebAssets } = await tsImport("../src/web/assets.ts", import.meta.url);
  await buildWebAssets();
  console.error("payrail: checkout page and dashboard built in .build/web");
} catch (e) {
  console.error(`payrail: could not build the checkout page and dashboard (they answer 503 until npm run build works): ${e?.message ?? e}`);
}
try {
  const { buildPgliteTemplate } = await tsImport("../src/db/client.ts", import.meta.url);
  const { dir, built } = await buildPgliteTemplate();
  console.error(`payrail: embedded database template ${built ? "built" : "up to date"} in ${dir} (${Math.round(performance.now() - started)} ms)`);
} catch (e) {
  console.error(`payrail: could not build the embedded database template (new databases will run initdb): ${e?.stack ?? e}`);
}
