// Writes openapi.json, the OpenAPI document of the REST API (docs/openapi.md). With --check: exit 1 if the file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { apiReference } from '../src/features.ts';

const file = new URL('../openapi.json', import.meta.url);
const text = apiReference().text();
if (process.argv.includes('--check')) {
  let current = '';
  try { current = readFileSync(file, 'utf8'); } catch { /* missing */ }
  if (current !== text) {
    console.error('openapi.json is out of date; run `npm run openapi:print`');
    process.exit(1);
  }
  console.log('openapi.json is up to date');
} else {
  writeFileSync(file, text);
  console.log('wrote openapi.json');
}
