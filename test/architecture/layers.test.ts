// The layering of src/ (docs/architecture.md): lower layers never import a feature or the wiring, features never
// import the wiring, and features do not import each other in a cycle.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE_INTERNAL_EVENT_TYPES } from '../../src/domain/event-types.ts';
import { loadConfig } from '../../src/config.ts';
import { declared, features } from '../../src/features.ts';

const SRC = path.resolve('src');
/** The features: each one src/features.ts lists is its folder of that name; web (the pages) is wired by app.ts. */
const FEATURES = [...features(loadConfig({})).map((f) => f.name), 'web'];
/** The wiring: it may import anything but the entry points. */
const WIRING = ['app.ts', 'features.ts', 'config.ts', 'platform.ts', 'admin'];
/** The process entry points (server, workers, CLIs): the top layer, imported by nothing else. */
const ENTRY_POINTS = 'bin';

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
  if (part === ENTRY_POINTS) return 'entry';
  if (WIRING.includes(part)) return 'wiring';
  if (FEATURES.includes(part)) return 'feature';
  return 'lower';
};

/**
 * The string literals of a TypeScript file: single- and double-quoted strings, the text of template literals (not
 * their `${...}` parts), and the single-quoted strings inside template text (SQL: `"kind" = 'fee'`); comments skipped.
 */
export function stringLiterals(text: string): string[] {
  const found: string[] = [];
  const sqlStrings = (chunk: string) => [...chunk.matchAll(/'([^'\n]*)'/g)].map((m) => m[1]!);
  let i = 0;
  // Open template literals and, for each, the brace depth of the `${` it is inside (-1: in its text).
  const templates: number[] = [];
  let chunk = '';
  while (i < text.length) {
    const c = text[i]!;
    const inText = templates.length > 0 && templates.at(-1) === -1;
    if (inText) {
      if (c === '\\') {
        chunk += text.slice(i, i + 2);
        i += 2;
      } else if (c === '`') {
        found.push(chunk, ...sqlStrings(chunk));
        chunk = '';
        templates.pop();
        i++;
      } else if (c === '$' && text[i + 1] === '{') {
        found.push(chunk, ...sqlStrings(chunk));
        chunk = '';
        templates[templates.length - 1] = 0;
        i += 2;
      } else {
        chunk += c;
        i++;
      }
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      if (i < 0) break;
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 2;
      if (i < 2) break;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      found.push(text.slice(i + 1, j));
      i = j + 1;
    } else if (c === '`') {
      templates.push(-1);
      i++;
    } else {
      if (templates.length > 0 && c === '{') templates[templates.length - 1]!++;
      if (templates.length > 0 && c === '}') {
        if (templates.at(-1) === 0) templates[templates.length - 1] = -1;
        else templates[templates.length - 1]!--;
      }
      i++;
    }
  }
  return found;
}

/** What the features declare that a lower layer must not spell out (a lower layer gets them from the declarations). */
const FEATURE_NAMES = new Set<string>([
  ...Object.keys(declared.eventTypes),
  ...declared.internalEventTypes.filter((t) => !CORE_INTERNAL_EVENT_TYPES.includes(t)),
  ...declared.journalKinds,
  ...Object.keys(declared.ledgerAccounts),
  ...declared.outgoingPurposes,
  ...Object.keys(declared.transitions),
  ...declared.ledgerChecks.map((c) => c.name),
]);

/**
 * Lower-layer literals that equal a feature's name but are not that name: each with why. `file: [literals]`.
 * Anything else in this list is a lower layer naming a feature and fails the test.
 */
const NOT_FEATURE_NAMES: Record<string, { literals: string[]; why: string }> = {
  'ledger/entries.ts': { literals: ['refund', 'withdrawal', 'invoice'], why: 'LedgerEntry source columns (refundId, withdrawalId, invoiceId) of the ledger schema' },
  'ledger/balances.ts': { literals: ['payment', 'deposit'], why: 'ChainTransfer roles, the chains\' vocabulary of incoming transfers' },
  'core/risk.ts': { literals: ['withdrawal', 'deposit'], why: 'the risk hook\'s directions of money (out to, in from a third party)' },
  'core/audit.ts': { literals: ['invoice.refunded'], why: 'an action of the audit log (who refunded), not the event of the same name' },
  'pricing/audit.ts': { literals: ['invoice', 'payment'], why: 'the two sides of a rate in its audit text' },
};

/** What a feature's objects are called in code: its name in the singular, camel case (payment-links: paymentLink), and its outgoing purposes (refund). */
const OBJECT_NAMES = [...FEATURES.map((f) => f.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()).replace(/ies$/, 'y').replace(/s$/, '')), ...declared.outgoingPurposes];

/** Ids of features' objects that lower layers do use, each with why (anything else, e.g. an `autoswapId` column in the ledger, fails). */
const LOWER_LAYER_IDS: Record<string, string> = {
  companyId: 'the tenant every lower layer scopes by (core/tenants.ts)',
  keyId: 'the API key core/auth.ts authenticates',
  invoiceId: 'a LedgerEntry source column of the ledger schema',
  withdrawalId: 'a LedgerEntry source column of the ledger schema',
  refundId: 'a LedgerEntry source column of the ledger schema',
};

/** A file's text without its comments (rough: enough for identifiers; `//` after a colon is a URL, kept). */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** The `<object>Id` identifiers (or quoted SQL columns) of a feature's objects in a file's code. */
const featureIdsIn = (text: string) => [...withoutComments(text).matchAll(new RegExp(`\\b(${OBJECT_NAMES.join('|')})Ids?\\b`, 'g'))].map((m) => m[0]);

const edges = sourceFiles(SRC).flatMap((file) => {
  const from = path.relative(SRC, file);
  return importsOf(file)
    .filter((to) => !to.startsWith('..'))
    .map((to) => ({ from, to }));
});

describe('architecture', () => {
  it('knows the features: each is a folder of src/', () => {
    expect(FEATURES).toEqual(expect.arrayContaining(['invoices', 'payments', 'withdrawals', 'deposits', 'keys', 'audit', 'web']));
    for (const f of FEATURES) expect(fs.statSync(path.join(SRC, f)).isDirectory()).toBe(true);
  });

  it('reads the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: path.join('payments', 'processor.ts'), to: path.join('invoices', 'lifecycle.ts') });
  });

  it('lower layers (db, domain, chains, ledger, http, graphql, core, ...) import no feature and no wiring', () => {
    const bad = edges.filter((e) => kindOf(e.from) === 'lower' && kindOf(e.to) !== 'lower');
    expect(bad).toEqual([]);
  });

  it('reads the string literals it checks', () => {
    expect(stringLiterals("const a = 'x'; // 'no'\n/* `no` */ const b = `t ${c('y')} \"kind\" = 'z'`;")).toEqual(['x', 't ', 'y', ' "kind" = \'z\'', 'z']);
    expect(FEATURE_NAMES).toContain('invoice.done');
    expect(FEATURE_NAMES).toContain('withdrawal_hold');
    expect(FEATURE_NAMES).toContain('refund');
    expect(FEATURE_NAMES).toContain('deposit-status');
    expect(FEATURE_NAMES).toContain('webhook.failing');
    // A feature's ledger accounts: ledger/ spelling autoswap's swap_hold (as its ACCOUNTS once did) fails the next test.
    expect(FEATURE_NAMES).toContain('swap_hold');
    expect(stringLiterals("const ACCOUNTS = { swapHold: 'swap_hold', venueFees: 'venue_fees' } as const;").filter((l) => FEATURE_NAMES.has(l))).toEqual(['swap_hold', 'venue_fees']);
  });

  it('lower layers spell out no name a feature declares (event type, journal kind, ledger account or check, metrics subject, outgoing purpose)', () => {
    const named = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file))
      .filter((file) => kindOf(file) === 'lower')
      .flatMap((file) => {
        const allowed = NOT_FEATURE_NAMES[file.split(path.sep).join('/')]?.literals ?? [];
        const literals = stringLiterals(fs.readFileSync(path.join(SRC, file), 'utf8'));
        return [...new Set(literals.filter((l) => FEATURE_NAMES.has(l) && !allowed.includes(l)))].map((literal) => `${file}: '${literal}'`);
      });
    expect(named).toEqual([]);
  });

  it('lower layers reference no feature\'s object by id beyond the few listed with why (a generic subjectId instead)', () => {
    expect(featureIdsIn('const j = { autoswapId: s.id, companyId }; // depositId\n/* paymentLinkId */ sql`"autoswapId"`')).toEqual(['autoswapId', 'companyId', 'autoswapId']);
    const named = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file))
      .filter((file) => kindOf(file) === 'lower')
      .flatMap((file) => [...new Set(featureIdsIn(fs.readFileSync(path.join(SRC, file), 'utf8')))].filter((id) => !(id.replace(/s$/, '') in LOWER_LAYER_IDS)).map((id) => `${file}: ${id}`));
    expect(named).toEqual([]);
  });

  it('the fees invoices will still charge are read through invoices alone (src/invoices/uncharged-fees.ts)', () => {
    const spelling = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file))
      .filter((file) => partOf(file) !== 'invoices' && fs.readFileSync(path.join(SRC, file), 'utf8').includes('payrail_uncharged_invoice_fees'));
    expect(spelling).toEqual([]);
  });

  it('features import no wiring', () => {
    expect(edges.filter((e) => kindOf(e.from) === 'feature' && kindOf(e.to) !== 'feature' && kindOf(e.to) !== 'lower')).toEqual([]);
  });

  it('entry points (src/bin) are the top layer: only they import them', () => {
    expect(edges.filter((e) => kindOf(e.to) === 'entry' && kindOf(e.from) !== 'entry')).toEqual([]);
  });

  it('every process entry point is in src/bin (a file that reads the configuration or exits on signals is one)', () => {
    const outside = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file))
      .filter((file) => kindOf(file) !== 'entry' && /\b(loadConfigOrExit|exitOnSignals)\(/.test(fs.readFileSync(path.join(SRC, file), 'utf8')))
      .filter((file) => !['config.ts', 'shutdown.ts'].includes(file));
    expect(outside).toEqual([]);
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
