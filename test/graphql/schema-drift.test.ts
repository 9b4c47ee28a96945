import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/features.ts';

describe('schema.graphql', () => {
  it('matches the Pothos schema (run `npm run schema:print` after changing it)', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printedSchema()}\n`);
  });
});
