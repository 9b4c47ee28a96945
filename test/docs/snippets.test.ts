// Docs that compile: every TypeScript block of README.md, docs/*.md, sdk/README.md and examples/*/README.md (not
// marked `no-check`) type-checks against this repository's compiler options, installed package versions and the
// SDK's own types; the extractor and the check are proved on planted broken snippets.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSnippets, documentationFiles, extractSnippets } from '../support/doc-snippets.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('documentation snippets', () => {
  it('the extractor finds ts and typescript blocks with their line, skips other languages, and honours no-check', () => {
    const markdown = ['# T', '```ts', 'const a: number = 1;', '```', '```sh', 'echo hi', '```', '```typescript no-check', 'import x from "./yours";', '```', '```json', '{}', '```'].join('\n');
    expect(extractSnippets('x.md', markdown)).toEqual([
      { file: 'x.md', line: 2, code: 'const a: number = 1;', check: true },
      { file: 'x.md', line: 8, code: 'import x from "./yours";', check: false },
    ]);
    expect(() => extractSnippets('x.md', '```ts\nconst a = 1;')).toThrow(/never closes/);
  });

  it('fails on a planted broken snippet, naming the file and line, and passes a good one', () => {
    const planted = extractSnippets('docs/planted.md', ['intro', '```ts', "import { createHmac } from 'node:crypto';", "const digest: number = createHmac('sha512', 'k').digest('hex');", '```'].join('\n'));
    const problems = checkSnippets(root, planted);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.snippet).toMatchObject({ file: 'docs/planted.md', line: 2 });
    expect(problems[0]!.messages.join('\n')).toMatch(/line 4: Type 'string' is not assignable to type 'number'/);
    const good = extractSnippets('docs/planted.md', ['```ts', "import { createHmac } from 'node:crypto';", "export const digest: string = createHmac('sha512', 'k').digest('hex');", '```'].join('\n'));
    expect(checkSnippets(root, good)).toEqual([]);
  });

  it('checks the SDK guide against the SDK: a planted misuse of @payrail/sdk fails, the right use passes', () => {
    const file = path.join(os.tmpdir(), 'planted-sdk-guide.md');
    fs.writeFileSync(file, ['```ts', "import { createPayrailClient } from '@payrail/sdk';", "createPayrailClient({ baseUrl: 'https://payrail.example', token: 42 });", '```'].join('\n'));
    try {
      const problems = checkSnippets(root, extractSnippets('sdk/planted.md', fs.readFileSync(file, 'utf8')));
      expect(problems).toHaveLength(1);
      expect(problems[0]!.messages.join('\n')).toMatch(/line 3: Type 'number' is not assignable to type 'string'/);
    } finally {
      fs.rmSync(file, { force: true });
    }
    const good = extractSnippets('sdk/planted.md', ['```ts', "import { createPayrailClient } from '@payrail/sdk';", "export const payrail = createPayrailClient({ baseUrl: 'https://payrail.example', token: 'pk_test_x' });", '```'].join('\n'));
    expect(checkSnippets(root, good)).toEqual([]);
  });

  it('every checked TypeScript block of the documentation compiles', { timeout: 120_000 }, () => {
    const snippets = documentationFiles(root).flatMap((file) => extractSnippets(file, fs.readFileSync(path.join(root, file), 'utf8')));
    const checked = snippets.filter((s) => s.check);
    // The SDK's 5-minute guide and the example shop's README are among them.
    expect(checked.filter((s) => s.file === 'sdk/README.md')).toHaveLength(3);
    expect(checked.filter((s) => s.file === 'examples/shop/README.md')).toHaveLength(1);
    // A floor, so an extractor that silently found nothing cannot pass.
    expect(checked.length).toBeGreaterThanOrEqual(4);
    const problems = checkSnippets(root, checked);
    expect(problems.map((p) => `${p.snippet.file}:${p.snippet.line}\n  ${p.messages.join('\n  ')}`).join('\n')).toBe('');
  });
});
