// The fenced blocks of the documentation (README.md, docs/*.md, sdk/README.md, examples/*/README.md); its TypeScript
// blocks type-checked against the project's own compiler options and
// installed packages (test/docs/snippets.test.ts). A block opened with ```ts or ```typescript is checked; one whose
// info string adds `no-check` (```ts no-check) is not: it needs files of the reader's project (generated code,
// client libraries this repository does not install). docs/contributing-docs.md says when to use it.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface Snippet {
  /** The markdown file, relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  check: boolean;
}

const FENCE = /^```(\S*)(.*)$/;

/** A fenced code block of a markdown file: its language, the rest of its info string, and its text. */
export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The words after the language (`no-check`, `no-run`). */
  flags: string[];
  code: string;
}

/** Every fenced block of a markdown text, in order; a block that never closes is an error. */
export function extractBlocks(file: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, lang = '', rest = ''] = open;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never closes`);
    blocks.push({ file, line: i + 1, lang, flags: rest.trim().split(/\s+/).filter(Boolean), code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Every ```ts/```typescript block of a markdown text, in order. */
export function extractSnippets(file: string, markdown: string): Snippet[] {
  return extractBlocks(file, markdown)
    .filter((b) => b.lang === 'ts' || b.lang === 'typescript')
    .map((b) => ({ file, line: b.line, code: b.code, check: !b.flags.includes('no-check') }));
}

/**
 * The markdown files whose blocks the suite checks: README.md, docs/*.md, the SDK's guide (sdk/README.md) and the
 * examples' READMEs (examples/<name>/README.md).
 */
export function documentationFiles(root: string): string[] {
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  const examples = fs
    .readdirSync(path.join(root, 'examples'))
    .sort()
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => fs.existsSync(path.join(root, f)));
  return ['README.md', ...docs, 'sdk/README.md', ...examples];
}

export interface SnippetProblem {
  snippet: Snippet;
  messages: string[];
}

/**
 * Type-checks the snippets (each its own module, as if it sat beside its markdown file) with the compiler options of
 * `root`/tsconfig.json, `@payrail/sdk` being sdk/src/index.ts; answers the snippets that do not compile, with the compiler's messages.
 */
export function checkSnippets(root: string, snippets: readonly Snippet[]): SnippetProblem[] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const virtual = new Map<string, Snippet>();
  snippets.forEach((s, n) => {
    const dir = path.dirname(path.join(root, s.file));
    // A module of its own (top-level await, its own names), sitting where its markdown file is.
    virtual.set(path.join(dir, `__snippet_${n}.ts`), { ...s, code: `${s.code}\nexport {};\n` });
  });
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (f) => virtual.has(path.resolve(f)) || ts.sys.fileExists(f);
  host.readFile = (f) => virtual.get(path.resolve(f))?.code ?? readFile(f);
  host.getSourceFile = (f, language, onError, create) => {
    const v = virtual.get(path.resolve(f));
    return v ? ts.createSourceFile(f, v.code, language, true) : getSourceFile(f, language, onError, create);
  };
  // The SDK's guide imports the package by its name, as a shop does; here that is the SDK's own entry point.
  const paths = { '@payrail/sdk': [path.join(root, 'sdk/src/index.ts')] };
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options: { ...options, paths, noEmit: true }, host });
  const problems: SnippetProblem[] = [];
  for (const [fileName, snippet] of virtual) {
    const source = program.getSourceFile(fileName)!;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    if (diagnostics.length === 0) continue;
    problems.push({
      snippet,
      messages: diagnostics.map((d) => {
        const where = d.start === undefined ? '' : `line ${snippet.line + source.getLineAndCharacterOfPosition(d.start).line + 1}: `;
        return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
    });
  }
  return problems;
}
