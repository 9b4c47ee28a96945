// Docs that run: every shell block of the documentation that is not marked `no-run` runs against a real test server
// (curl with $PAYRAIL_URL and $PAYRAIL_TOKEN), exits 0, and each documented answer (`# -> 201 {…}`) matches what the
// server answered. The checker is proved on planted broken blocks in a temporary markdown file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { documentedAnswers, extractShellBlocks, parseShape, runShellBlocks, shapeMismatch, type BlockRun } from '../support/doc-shell.ts';
import { documentationFiles } from '../support/doc-snippets.ts';
import { useServer } from '../support/server.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-planted-docs-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const shellEnv = (url: string, token: string): Record<string, string> => ({
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? os.tmpdir(),
  PAYRAIL_URL: url,
  PAYRAIL_TOKEN: token,
});

const report = (runs: BlockRun[]) => runs.flatMap((r) => r.problems).join('\n');

describe('the shell block extractor and the answer notation', () => {
  it('finds sh, bash and shell blocks with their line and honours no-run', () => {
    const markdown = ['# T', '```sh', 'curl -s $PAYRAIL_URL/x', '```', '```bash no-run', 'npm install', '```', '```shell', 'echo', '```', '```ts', 'x', '```', '```', 'plain', '```'].join('\n');
    expect(extractShellBlocks('x.md', markdown).map((b) => [b.line, b.lang, b.run])).toEqual([
      [2, 'sh', true],
      [5, 'bash', false],
      [8, 'shell', true],
    ]);
  });

  it('ties each documented answer to the curl written last before it', () => {
    const code = ['ID=$(curl -s -X POST $PAYRAIL_URL/a | jq -r .id)', '# -> 201 {"id":"…"}', 'curl -s $PAYRAIL_URL/b   # -> 204', 'curl -s $PAYRAIL_URL/c   # the money', 'curl -s $PAYRAIL_URL/d \\', '  -d x   # -> {"ok": true}', '# -> prose only'].join('\n');
    expect(documentedAnswers({ file: 'x.md', line: 1, code }).map((a) => [a.call, a.status, a.shape?.kind])).toEqual([
      [0, 201, 'object'],
      [1, 204, undefined],
      [3, undefined, 'object'],
    ]);
    expect(() => documentedAnswers({ file: 'x.md', line: 1, code: '# -> 200' })).toThrow(/before any curl/);
  });

  it('reads the notation: … as any value, more keys or any text, <…> as any text, keys without values', () => {
    const shape = parseShape('{"id", "token": "rk_test_…", "state":"seen", "n": 24, "none": null, "list": [1, …], "any": …, "address":{…}} trailing prose').shape;
    const good = { id: 'k1', token: 'rk_test_abc', state: 'seen', n: 24, none: null, list: [1, 2, 3], any: { x: 1 }, address: { a: 1 } };
    expect(shapeMismatch(shape, good)).toBeUndefined();
    expect(shapeMismatch(shape, { ...good, token: 'rk_live_abc' })).toMatch(/\$\.token: "rk_live_abc", documented "rk_test_…"/);
    expect(shapeMismatch(shape, { ...good, state: 'confirmed' })).toMatch(/\$\.state/);
    expect(shapeMismatch(shape, { ...good, extra: 1 })).toMatch(/has extra/);
    const { id: _id, ...withoutId } = good;
    expect(shapeMismatch(shape, withoutId)).toMatch(/\$\.id: missing/);
    expect(shapeMismatch(shape, { ...good, list: [2] })).toMatch(/\$\.list\[0\]/);
    const open = parseShape('{"id":"<transfer id>","state":"seen",…}').shape;
    expect(shapeMismatch(open, { id: 't1', state: 'seen', more: true })).toBeUndefined();
    expect(shapeMismatch(open, { id: 7, state: 'seen' })).toMatch(/\$\.id: 7/);
  });
});

describe('documentation shell blocks, against a test server', { timeout: 240_000 }, () => {
  // The README's webhook example sets a loopback URL, which only a server started with WEBHOOK_ALLOW_PRIVATE takes.
  const server = useServer('pglite', { WEBHOOK_ALLOW_PRIVATE: '1' });

  const plant = (name: string, lines: string[]) => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, lines.join('\n'));
    return extractShellBlocks(file, fs.readFileSync(file, 'utf8'));
  };

  it('fails a planted block that exits non-zero, one whose answer is not the documented one, and an unmarked block that calls no API (without running it)', async () => {
    const { publicToken } = await server.merchant();
    const marker = path.join(tmp, 'ran');
    const blocks = plant('planted.md', [
      '# Planted',
      '```sh',
      'curl -s $PAYRAIL_URL/api/invoices/v1/regular/no-such-invoice',
      '```',
      '```sh',
      'curl -s -X POST $PAYRAIL_URL/api/invoices/v1/regular -H "Authorization: Bearer $PAYRAIL_TOKEN" \\',
      "  -H 'Content-Type: application/json' -d '{\"invoiceCurrency\":\"usd\",\"items\":[{\"name\":\"Tea\",\"price\":2}]}'",
      '# -> 201 {"id":"…","status":"paid",…}',
      '```',
      '```sh',
      'curl -s -X POST $PAYRAIL_URL/api/invoices/v1/regular -H "Authorization: Bearer $PAYRAIL_TOKEN" -d "{" # -> 201',
      '```',
      '```sh',
      'curl -sf $PAYRAIL_URL/api/no-such-path | jq .',
      '```',
      '```sh',
      `touch ${marker}`,
      '```',
      '```sh no-run',
      `touch ${marker}`,
      '```',
      '```sh',
      'curl -s $PAYRAIL_URL/api/company/balances -H "Authorization: Bearer $PAYRAIL_TOKEN"   # -> 200 {"balances": […], …}',
      '```',
    ]);
    const runs = await runShellBlocks(blocks, shellEnv(server.url, publicToken));
    expect(runs.map((r) => r.block.line)).toEqual([2, 5, 10, 13, 16, 22]);
    const [missing, wrongAnswer, wrongStatus, failing, unmarked, good] = runs;
    expect(report([missing!])).toMatch(/planted\.md:2: curl #1 answered 404/);
    expect(report([wrongAnswer!])).toMatch(/planted\.md:5: curl #1 \(documented 201 \{"id":"…","status":"paid",…\}\): \$\.status: "created", documented "paid"/);
    expect(report([wrongStatus!])).toMatch(/planted\.md:10: curl #1 answered 4\d\d, documented 201/);
    expect(report([failing!])).toMatch(/planted\.md:13: exited 22/);
    expect(report([unmarked!])).toMatch(/planted\.md:16: a shell block that calls no API on \$PAYRAIL_URL/);
    expect(fs.existsSync(marker), 'the unmarked block and the no-run one were not run').toBe(false);
    expect(good!.problems).toEqual([]);
    expect(JSON.parse(good!.stdout)).toHaveProperty('balances');
  });

  it('carries the variables a block assigns to the next block of the same file', async () => {
    const { publicToken } = await server.merchant();
    const blocks = plant('carry.md', [
      '```sh',
      'ID=$(curl -s -X POST $PAYRAIL_URL/api/invoices/v1/regular -H "Authorization: Bearer $PAYRAIL_TOKEN" \\',
      "  -H 'Content-Type: application/json' -d '{\"invoiceCurrency\":\"usd\",\"items\":[{\"name\":\"Tea\",\"price\":2}]}' | jq -r .id)",
      '```',
      '```sh',
      'curl -s $PAYRAIL_URL/api/invoices/v1/regular/$ID   # -> 200 {"status":"created",…}',
      '```',
    ]);
    const runs = await runShellBlocks(blocks, shellEnv(server.url, publicToken));
    expect(report(runs)).toBe('');
    expect(JSON.parse(runs[1]!.stdout)).toMatchObject({ status: 'created' });
  });

  it('every shell block of the documentation runs as documented, or is marked no-run', async () => {
    let ran = 0;
    const problems: string[] = [];
    for (const file of documentationFiles(root)) {
      const blocks = extractShellBlocks(file, fs.readFileSync(path.join(root, file), 'utf8'));
      if (!blocks.some((b) => b.run)) continue;
      // A merchant of its own per file: one file's settings (a payout policy, a webhook URL) stay out of the next.
      const { publicToken } = await server.merchant();
      const runs = await runShellBlocks(blocks, shellEnv(server.url, publicToken));
      ran += runs.length;
      problems.push(...runs.flatMap((r) => r.problems));
    }
    expect(problems.join('\n')).toBe('');
    // A floor, so an extractor that silently found nothing cannot pass: README's three, security's two.
    expect(ran).toBeGreaterThanOrEqual(5);
  });
});
