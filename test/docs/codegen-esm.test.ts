// The codegen guide (docs/graphql.md, "Typed documents") works for an ESM project as written: a project of its own
// (`"type": "module"`, TypeScript `nodenext`) with this repository's codegen settings, schema.graphql, the guide's
// document and its urql client code generates, type-checks, and its generated modules load in Node. With the
// CommonJS-style imports (`emitLegacyCommonJSImports: true`) the same project does not compile: the check can fail.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import repositoryCodegen from '../../codegen.ts';
import { extractBlocks } from '../support/doc-snippets.ts';

const root = path.resolve(import.meta.dirname, '../..');
// Inside the repository (tmp/ is ignored), so the project finds @urql/core and the codegen presets installed here.
fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
const work = fs.mkdtempSync(path.join(root, 'tmp', 'codegen-esm-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const guide = extractBlocks('docs/graphql.md', fs.readFileSync(path.join(root, 'docs/graphql.md'), 'utf8'));
const documentBlock = guide.find((b) => b.lang === 'graphql' && b.code.startsWith('# src/checkout.graphql'));
const clientBlock = guide.find((b) => b.lang === 'ts' && b.code.includes("from './generated/gql/index.js'"));

/** The reader's project: the guide's files under src/, codegen as the guide says to copy it. */
async function makeProject(name: string, emitLegacyCommonJSImports: boolean): Promise<string> {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  fs.copyFileSync(path.join(root, 'schema.graphql'), path.join(dir, 'schema.graphql'));
  fs.writeFileSync(path.join(dir, 'src/checkout.graphql'), documentBlock!.code);
  fs.writeFileSync(path.join(dir, 'src/checkout.ts'), clientBlock!.code);
  const ours = repositoryCodegen.generates['generated/gql/'];
  if (typeof ours !== 'object' || Array.isArray(ours) || !('preset' in ours)) throw new Error("codegen.ts has no 'generated/gql/' output with a preset");
  // "schema pointing at its copy of schema.graphql and documents at its own files" (.ts too, for inline graphql()).
  const outputs = (await generate(
    {
      cwd: dir,
      schema: 'schema.graphql',
      documents: ['src/**/*.graphql', 'src/**/*.ts'],
      generates: { 'src/generated/gql/': { ...ours, config: { ...ours.config, emitLegacyCommonJSImports } } },
      silent: true,
    },
    false,
  )) as { filename: string; content: string }[];
  for (const out of outputs) {
    const file = path.resolve(dir, out.filename);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, out.content);
  }
  return dir;
}

/** tsc's diagnostics for the project's src/, with an ordinary ESM tsconfig (nodenext, strict). */
function typeCheck(dir: string): string[] {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const program = ts.createProgram({ rootNames: [path.join(dir, 'src/checkout.ts')], options });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.relative(dir, d.file.fileName)}: ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('the codegen guide in an ESM project', { timeout: 120_000 }, () => {
  it('finds the guide’s document and client code', () => {
    expect(documentBlock?.code).toMatch(/query CheckoutInvoice\(\$id: ID!\)/);
    expect(clientBlock?.code).toContain("from './generated/gql/graphql.js'");
  });

  it('generates, type-checks under nodenext, and the generated modules load in Node', async () => {
    const dir = await makeProject('esm-shop', false);
    expect(typeCheck(dir)).toEqual([]);
    // Compiled as the reader's build would (imports kept as written), then imported by Node's ESM loader.
    const generated = path.join(dir, 'src/generated/gql');
    for (const file of fs.readdirSync(generated).filter((f) => f.endsWith('.ts'))) {
      const { outputText } = ts.transpileModule(fs.readFileSync(path.join(generated, file), 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
      fs.writeFileSync(path.join(generated, file.replace(/\.ts$/, '.js')), outputText);
    }
    const probe = `const m = await import(${JSON.stringify(pathToFileURL(path.join(generated, 'index.js')).href)});
const g = await import(${JSON.stringify(pathToFileURL(path.join(generated, 'graphql.js')).href)});
const inline = m.graphql('query InvoiceStatus($id: ID!) { invoice(id: $id) { id status } }');
console.log(JSON.stringify({ checkout: g.CheckoutInvoiceDocument.definitions[0].name.value, inline: inline.definitions?.[0]?.name?.value }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { cwd: dir, timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ checkout: 'CheckoutInvoice', inline: 'InvoiceStatus' });
  });

  it('fails with CommonJS-style generated imports (emitLegacyCommonJSImports: true)', async () => {
    const dir = await makeProject('cjs-style', true);
    expect(typeCheck(dir).join('\n')).toMatch(/Relative import paths need explicit file extensions/);
  });
});
