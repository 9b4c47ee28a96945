// Writes schema.graphql (lexicographically sorted SDL). With --check: exit 1 if the file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { printedSchema } from '../src/features.ts';

const file = new URL('../schema.graphql', import.meta.url);
const sdl = printedSchema() + '\n';
if (process.argv.includes('--check')) {
  let current = '';
  try { current = readFileSync(file, 'utf8'); } catch { /* missing */ }
  if (current !== sdl) {
    console.error('schema.graphql is out of date; run `npm run schema:print`');
    process.exit(1);
  }
  console.log('schema.graphql is up to date');
} else {
  writeFileSync(file, sdl);
  console.log('wrote schema.graphql');
}
