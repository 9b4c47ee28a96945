// A generated file the repository commits (schema.graphql, openapi.json): written, or with --check compared, so that
// a stale copy fails CI (exit 1) with the command that brings it up to date.
import { readFileSync, writeFileSync } from 'node:fs';

export function writeOrCheck(name: string, text: string, printCommand: string): void {
  const file = new URL(`../${name}`, import.meta.url);
  if (!process.argv.includes('--check')) {
    writeFileSync(file, text);
    console.log(`wrote ${name}`);
    return;
  }
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing: stale
  }
  if (current !== text) {
    console.error(`${name} is out of date; run \`${printCommand}\``);
    process.exit(1);
  }
  console.log(`${name} is up to date`);
}
