// Docs that compile: every TypeScript block of README.md and docs/*.md (not marked `no-check`) type-checks against
// this repository's compiler options and installed package versions; the extractor and the check are proved on a
// planted broken snippet.
import fs from 'node:fs';
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

  it('every checked TypeScript block of README.md and docs/*.md compiles', { timeout: 120_000 }, () => {
    const snippets = documentationFiles(root).flatMap((file) => extractSnippets(file, fs.readFileSync(path.join(root, file), 'utf8')));
    const checked = snippets.filter((s) => s.check);
    // A floor, so an extractor that silently found nothing cannot pass.
    expect(checked.length).toBeGreaterThanOrEqual(4);
    const problems = checkSnippets(root, checked);
    expect(problems.map((p) => `${p.snippet.file}:${p.snippet.line}\n  ${p.messages.join('\n  ')}`).join('\n')).toBe('');
  });
});
