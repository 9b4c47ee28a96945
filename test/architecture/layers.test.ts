// The layering of src/ (docs/architecture.md): lower layers never import a feature or the wiring, features never
// import the wiring, and features do not import each other in a cycle.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const FEATURES = ['autoswap', 'companies', 'deposits', 'emails', 'exports', 'invoices', 'payments', 'sandbox', 'web', 'webhooks', 'withdrawals'];
/** The wiring and the process entry points: they may import anything. */
const WIRING = ['app.ts', 'features.ts', 'config.ts', 'platform.ts', 'main.ts', 'admin', 'cli'];
const ENTRY_POINT = /(^|\/)main\.ts$/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import (type-only ones too) of a file, as paths under src/. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\s+'([^']+)'|declare module\s+'([^']+)'/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => path.relative(SRC, path.resolve(path.dirname(file), s)));
}

/** The top-level part of src/ a path belongs to: a folder name or a root file name. */
const partOf = (relative: string) => relative.split(path.sep)[0]!;
const kindOf = (relative: string) => {
  const part = partOf(relative);
  if (ENTRY_POINT.test(relative) || WIRING.includes(part)) return 'wiring';
  if (FEATURES.includes(part)) return 'feature';
  return 'lower';
};

const edges = sourceFiles(SRC).flatMap((file) => {
  const from = path.relative(SRC, file);
  return importsOf(file)
    .filter((to) => !to.startsWith('..'))
    .map((to) => ({ from, to }));
});

describe('architecture', () => {
  it('reads the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: path.join('payments', 'processor.ts'), to: path.join('invoices', 'lifecycle.ts') });
  });

  it('lower layers (db, domain, chains, ledger, http, graphql, core, ...) import no feature and no wiring', () => {
    const bad = edges.filter((e) => kindOf(e.from) === 'lower' && kindOf(e.to) !== 'lower');
    expect(bad).toEqual([]);
  });

  it('features import no wiring', () => {
    expect(edges.filter((e) => kindOf(e.from) === 'feature' && kindOf(e.to) === 'wiring')).toEqual([]);
  });

  it('features do not import each other in a cycle', () => {
    const graph = new Map<string, Set<string>>(FEATURES.map((f) => [f, new Set<string>()]));
    for (const e of edges) {
      if (kindOf(e.from) === 'feature' && kindOf(e.to) === 'feature' && partOf(e.from) !== partOf(e.to)) graph.get(partOf(e.from))!.add(partOf(e.to));
    }
    const cycles: string[][] = [];
    const visit = (node: string, trail: string[]) => {
      if (trail.includes(node)) return void cycles.push([...trail.slice(trail.indexOf(node)), node]);
      for (const next of graph.get(node)!) visit(next, [...trail, node]);
    };
    for (const f of FEATURES) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
