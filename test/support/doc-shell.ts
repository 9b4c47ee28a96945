// The shell blocks of the documentation (```sh, ```bash, ```shell), run against a test server by
// test/docs/shell.test.ts. A block either calls the API (`curl … $PAYRAIL_URL…`) and is run, or is opened with
// ```sh no-run (installing, starting the service, a real node, ...); an unmarked block that calls no API fails the
// check without being run. docs/contributing-docs.md is the writer's side of these rules.
//
// Each block runs in `bash -e -o pipefail` with a timeout, in a temporary directory, with PAYRAIL_URL and
// PAYRAIL_TOKEN set; the variables a block assigns carry over to the next block of the same file (the README's
// "Try it" makes the invoice its "Pay it" block pays). `curl` is wrapped to record every call's status and body: a
// comment `# -> 201 {"id":"…",…}` (status, answer, or both) documents the answer of the last curl written before it,
// which must match; a call without one must answer below 400.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { extractBlocks, type CodeBlock } from './doc-snippets.ts';

const SHELLS = new Set(['sh', 'bash', 'shell']);
const BLOCK_TIMEOUT_MS = 30_000;

export interface ShellBlock extends CodeBlock {
  run: boolean;
}

/** Every shell block of a markdown text, in order; `run` is false for the ones marked no-run. */
export function extractShellBlocks(file: string, markdown: string): ShellBlock[] {
  return extractBlocks(file, markdown)
    .filter((b) => SHELLS.has(b.lang))
    .map((b) => ({ ...b, run: !b.flags.includes('no-run') }));
}

/** A documented answer: `# -> [status] [json-like shape]`. */
export interface ExpectedAnswer {
  /** Index of the curl call (within its block) the comment documents. */
  call: number;
  status?: number;
  shape?: Shape;
  /** The comment's text, for messages. */
  text: string;
}

/**
 * The docs' notation of an answer: JSON where `…` stands for "any value" (as a value), "more keys" (as an object
 * member) or "any text" (inside a string, as does `<…>`), and a key without a value must only be there.
 */
export type Shape =
  | { kind: 'any' }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'pattern'; pattern: RegExp; text: string }
  | { kind: 'object'; members: { key: string; value: Shape }[]; open: boolean }
  | { kind: 'array'; items: Shape[]; open: boolean };

/** Parses the docs' answer notation from the start of `text`; answers the shape and where it ended. */
export function parseShape(text: string): { shape: Shape; end: number } {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`cannot read the documented answer ${JSON.stringify(text)} at ${i}: ${what}`);
  };
  const space = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const ellipsis = () => {
    if (text.startsWith('…', i)) return (i += 1), true;
    if (text.startsWith('...', i)) return (i += 3), true;
    return false;
  };
  const string = (): string => {
    if (text[i] !== '"') fail('a string');
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('an unclosed string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  /** Items separated by commas from the opening character to `close`. */
  const sequence = (close: string, item: () => void) => {
    i++;
    for (;;) {
      space();
      if (text[i] === close) break;
      item();
      space();
      if (text[i] === ',') i++;
      else if (text[i] !== close) fail(`',' or '${close}'`);
    }
    i++;
  };
  const value = (): Shape => {
    space();
    if (ellipsis()) return { kind: 'any' };
    const c = text[i];
    if (c === '{') {
      const members: { key: string; value: Shape }[] = [];
      let open = false;
      sequence('}', () => {
        if (ellipsis()) return void (open = true);
        const key = string();
        space();
        if (text[i] !== ':') return void members.push({ key, value: { kind: 'any' } });
        i++;
        members.push({ key, value: value() });
      });
      return { kind: 'object', members, open };
    }
    if (c === '[') {
      const items: Shape[] = [];
      let open = false;
      sequence(']', () => {
        if (ellipsis()) open = true;
        else items.push(value());
      });
      return { kind: 'array', items, open };
    }
    if (c === '"') {
      const s = string();
      if (!/…|<[^>]*>/.test(s)) return { kind: 'literal', value: s };
      const parts = s.split(/…|<[^>]*>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      return { kind: 'pattern', pattern: new RegExp(`^${parts.join('[\\s\\S]*')}$`), text: s };
    }
    const word = /^(true|false|null|-?\d+(?:\.\d+)?)/.exec(text.slice(i));
    if (!word) return fail('a value');
    i += word[0].length;
    return { kind: 'literal', value: JSON.parse(word[0]) as string | number | boolean | null };
  };
  const shape = value();
  return { shape, end: i };
}

/** Where `actual` differs from the shape (`$.a.b: …`), or undefined when it matches. */
export function shapeMismatch(shape: Shape, actual: unknown, at = '$'): string | undefined {
  switch (shape.kind) {
    case 'any':
      return actual === undefined ? `${at}: missing` : undefined;
    case 'literal':
      return actual === shape.value ? undefined : `${at}: ${JSON.stringify(actual)}, documented ${JSON.stringify(shape.value)}`;
    case 'pattern':
      return typeof actual === 'string' && shape.pattern.test(actual) ? undefined : `${at}: ${JSON.stringify(actual)}, documented ${JSON.stringify(shape.text)}`;
    case 'array': {
      if (!Array.isArray(actual)) return `${at}: ${JSON.stringify(actual)}, documented an array`;
      if (shape.open ? actual.length < shape.items.length : actual.length !== shape.items.length) {
        return `${at}: ${actual.length} items, documented ${shape.open ? 'at least ' : ''}${shape.items.length}`;
      }
      for (const [n, item] of shape.items.entries()) {
        const m = shapeMismatch(item, actual[n], `${at}[${n}]`);
        if (m) return m;
      }
      return undefined;
    }
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${at}: ${JSON.stringify(actual)}, documented an object`;
      const record = actual as Record<string, unknown>;
      for (const { key, value } of shape.members) {
        const m = shapeMismatch(value, record[key], `${at}.${key}`);
        if (m) return m;
      }
      if (!shape.open) {
        const extra = Object.keys(record).filter((k) => !shape.members.some((m) => m.key === k));
        if (extra.length > 0) return `${at}: has ${extra.join(', ')}, which the documented answer does not list (end it with … if it is partial)`;
      }
      return undefined;
    }
  }
}

const ANSWER = /#\s*->\s*(.*)$/;
const CURL = /(^|[\s$(|;&])curl\s/g;

/** The answers a block documents, each tied to the curl call written last before its comment. */
export function documentedAnswers(block: Pick<CodeBlock, 'file' | 'line' | 'code'>): ExpectedAnswer[] {
  const answers: ExpectedAnswer[] = [];
  let calls = 0;
  for (const [n, line] of block.code.split('\n').entries()) {
    const hash = line.search(/(^|\s)#/);
    const command = hash < 0 ? line : line.slice(0, hash);
    calls += [...command.matchAll(CURL)].length;
    const answer = hash < 0 ? null : ANSWER.exec(line.slice(hash));
    if (!answer) continue;
    const where = `${block.file}:${block.line + 1 + n}`;
    if (calls === 0) throw new Error(`${where}: an answer documented before any curl call`);
    let rest = answer[1]!.trim();
    const expected: ExpectedAnswer = { call: calls - 1, text: rest };
    const status = /^(\d{3})\b/.exec(rest);
    if (status) {
      expected.status = Number(status[1]);
      rest = rest.slice(3).trim();
    }
    if (rest.startsWith('{') || rest.startsWith('[')) {
      try {
        expected.shape = parseShape(rest).shape;
      } catch (e) {
        throw new Error(`${where}: ${(e as Error).message}`);
      }
    }
    if (expected.status === undefined && expected.shape === undefined) continue; // prose after the arrow
    answers.push(expected);
  }
  return answers;
}

/** Why a block that is not marked no-run cannot be run, or undefined when it can. */
export function notRunnable(block: ShellBlock): string | undefined {
  if (!block.run) return undefined;
  if (!/\bcurl\s/.test(block.code) || !block.code.includes('$PAYRAIL_URL')) {
    return `${block.file}:${block.line}: a shell block that calls no API on $PAYRAIL_URL; write it against $PAYRAIL_URL and $PAYRAIL_TOKEN, or open it with \`\`\`${block.lang} no-run (docs/contributing-docs.md)`;
  }
  return undefined;
}

// Records each call in $PAYRAIL_DOCS_CALLS (one file per call: its headers and body) and passes the body on.
const PRELUDE = `curl() {
  local call
  call=$(mktemp "$PAYRAIL_DOCS_CALLS/call.XXXXXX")
  echo "$call" >> "$PAYRAIL_DOCS_CALLS/log"
  command curl --max-time 15 -D "$call.headers" "$@" | tee "$call.body"
}
set -a
`;

export interface BlockRun {
  block: ShellBlock;
  /** Empty when the block ran and every call answered as documented. */
  problems: string[];
  stdout: string;
  stderr: string;
}

interface Call {
  status: number | undefined;
  body: string;
}

function readCalls(dir: string): Call[] {
  const log = path.join(dir, 'log');
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((call) => {
      const headers = fs.existsSync(`${call}.headers`) ? fs.readFileSync(`${call}.headers`, 'utf8') : '';
      // The last status line (a 100 Continue comes first).
      const statuses = [...headers.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)];
      const status = statuses.length > 0 ? Number(statuses[statuses.length - 1]![1]) : undefined;
      return { status, body: fs.existsSync(`${call}.body`) ? fs.readFileSync(`${call}.body`, 'utf8') : '' };
    });
}

function run(script: string, env: Record<string, string>, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    // Asynchronous: the test server may run in this very process.
    execFile('bash', ['-e', '-o', 'pipefail', '-c', script], { env, cwd, timeout: BLOCK_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr, timedOut: Boolean(error?.killed) });
    });
  });
}

/**
 * Runs the runnable shell blocks of one markdown file in order, each with `env` plus what the blocks before it
 * assigned; answers one result per block run. Blocks marked no-run are skipped; unmarked ones that cannot run
 * (notRunnable) are reported without running.
 */
export async function runShellBlocks(blocks: readonly ShellBlock[], env: Record<string, string>): Promise<BlockRun[]> {
  const results: BlockRun[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-docs-'));
  let carried: Record<string, string> = { ...env };
  try {
    for (const block of blocks) {
      if (!block.run) continue;
      const refusal = notRunnable(block);
      if (refusal) {
        results.push({ block, problems: [refusal], stdout: '', stderr: '' });
        continue;
      }
      let answers: ExpectedAnswer[];
      try {
        answers = documentedAnswers(block);
      } catch (e) {
        results.push({ block, problems: [(e as Error).message], stdout: '', stderr: '' });
        continue;
      }
      const calls = fs.mkdtempSync(path.join(work, 'calls-'));
      const state = path.join(calls, 'env');
      const script = `${PRELUDE}${block.code}\nenv -0 > ${JSON.stringify(state)}\n`;
      const out = await run(script, { ...carried, PAYRAIL_DOCS_CALLS: calls }, work);
      const where = `${block.file}:${block.line}`;
      const problems: string[] = [];
      if (out.timedOut) problems.push(`${where}: did not finish within ${BLOCK_TIMEOUT_MS / 1000} s`);
      else if (out.code !== 0) problems.push(`${where}: exited ${out.code}; stderr: ${out.stderr.trim().slice(-600)}`);
      const made = readCalls(calls);
      for (const [n, call] of made.entries()) {
        const expected = answers.find((a) => a.call === n);
        const label = `${where}: curl #${n + 1}`;
        if (call.status === undefined) {
          problems.push(`${label} got no answer`);
          continue;
        }
        const documented = expected?.status ?? (expected ? 'a success' : undefined);
        const ok = expected?.status !== undefined ? call.status === expected.status : expected ? call.status >= 200 && call.status < 300 : call.status < 400;
        if (!ok) {
          problems.push(`${label} answered ${call.status}${documented ? `, documented ${documented}` : ''}: ${call.body.slice(0, 300)}`);
          continue;
        }
        if (expected?.shape) {
          let body: unknown;
          try {
            body = JSON.parse(call.body);
          } catch {
            problems.push(`${label} answered ${JSON.stringify(call.body.slice(0, 200))}, not JSON; documented ${expected.text}`);
            continue;
          }
          const mismatch = shapeMismatch(expected.shape, body);
          if (mismatch) problems.push(`${label} (documented ${expected.text}): ${mismatch}`);
        }
      }
      for (const a of answers) {
        if (a.call >= made.length) problems.push(`${where}: documents the answer of curl #${a.call + 1} (${a.text}), but only ${made.length} ran`);
      }
      if (out.code === 0 && fs.existsSync(state)) {
        carried = Object.fromEntries(
          fs
            .readFileSync(state, 'utf8')
            .split('\0')
            .filter(Boolean)
            .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
        );
        delete carried['PAYRAIL_DOCS_CALLS'];
      }
      results.push({ block, problems, stdout: out.stdout, stderr: out.stderr });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return results;
}
