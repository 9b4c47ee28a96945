// The recorded-style answers of the chain APIs (test/fixtures/chains/, README there says where each shape comes
// from): the fake chains fill copies of them with their own state, so the adapters read the APIs' real shapes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/chains');
const cache = new Map<string, unknown>();

/** A fresh copy of test/fixtures/chains/<name>.json. */
export function fixture<T = any>(name: string): T {
  let value = cache.get(name);
  if (value === undefined) {
    value = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8'));
    cache.set(name, value);
  }
  return structuredClone(value) as T;
}
