// Limits every GraphQL operation meets before any resolver runs, for anonymous callers too: linear in the
// document (nested fragments), tokens (the parser's stack), depth, aliases, directives, cost; and no "Did you
// mean" once introspection is off. A test-mode and a live-mode token meet the same limits.
import { getIntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/graphql/limits.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

/** N nested fragments, each spreading the next twice: a naive walk costs 2^N. */
function fragmentBomb(n: number): string {
  let q = 'query { invoices(first: 1) { edges { node { ...F0 } } } }\n';
  for (let i = 0; i < n; i++) q += `fragment F${i} on Invoice { id company { name } ...F${i + 1} ...F${i + 1} }\n`;
  return `${q}fragment F${n} on Invoice { id }`;
}

const aliases = (n: number, field: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
const codes = (body: { errors?: { extensions?: { code?: string } }[] }) => (body.errors ?? []).map((e) => e.extensions?.code);

async function timed(server: TestServer, query: string) {
  const started = performance.now();
  const res = await server.graphql(query);
  return { ...res, ms: performance.now() - started };
}

describe.each(DATABASES)('GraphQL limits on %s', (kind) => {
  const server = useServer(kind, { GRAPHQL_INTROSPECTION: '0', GRAPHIQL: '0' });

  it('nested fragments are measured once each: 22 and 30 levels are refused at once, before any resolver', async () => {
    for (const n of [22, 30]) {
      const res = await timed(server, fragmentBomb(n));
      expect(res.ms, `${n} levels`).toBeLessThan(500);
      // No data and no UNAUTHENTICATED from the `invoices` resolver: nothing ran.
      expect(res.body.data).toBeUndefined();
      expect(codes(res.body)).toContain('QUERY_TOO_COSTLY');
      expect(codes(res.body)).not.toContain('UNAUTHENTICATED');
    }
  });

  it('documents past the token limit stop in the parser: 1,000 aliases, 200 pages, 10,000 levels, deep lists', async () => {
    const cases = [
      aliases(1000, 'invoice(id: "x") { id }'),
      aliases(200, 'invoices(first: 100) { edges { node { id } } }'),
      `{${'a{'.repeat(10_000)}b${'}'.repeat(10_001)}`,
      `{ invoice(id: ${'['.repeat(10_000)}1${']'.repeat(10_000)}) { id } }`,
      `{ invoice(id: "x") { id } } ${'fragment F on Invoice { id } '.repeat(200)}`,
    ];
    for (const query of cases) {
      const res = await timed(server, query);
      expect(res.ms).toBeLessThan(500);
      expect(res.body.errors[0].message, query.slice(0, 60)).toBe(`Syntax Error: Token limit of ${GRAPHQL_LIMITS.maxTokens} exceeded.`);
      expect(codes(res.body)).not.toContain('INTERNAL');
    }
  });

  it('aliases, depth, directives and cost each have a limit under the token limit', async () => {
    const tooManyAliases = await timed(server, aliases(GRAPHQL_LIMITS.maxAliases + 1, 'invoice(id: "x") { id }'));
    expect(codes(tooManyAliases.body)).toEqual(['TOO_MANY_ALIASES']);
    expect((await timed(server, aliases(GRAPHQL_LIMITS.maxAliases, 'invoice(id: "x") { id }'))).body.errors).toBeUndefined();

    const deep = `{ invoice(id: "x") { company { assets { asset } } } ${'a: invoice(id: "y") { company { assets { asset } } }'} }`;
    expect((await timed(server, deep)).body.errors).toBeUndefined();
    let tooDeep = 'id';
    for (let i = 0; i < GRAPHQL_LIMITS.maxDepth; i++) tooDeep = `company { name } a${i}: invoice(id: "x") { ${tooDeep} }`;
    expect(codes((await timed(server, `{ ${tooDeep} }`)).body)).toContain('QUERY_TOO_DEEP');

    const directives = await timed(server, `{ invoice(id: "x") { ${Array.from({ length: GRAPHQL_LIMITS.maxDirectives + 1 }, (_, i) => `f${i}: id @include(if: true)`).join(' ')} } }`);
    expect(codes(directives.body)).toContain('TOO_MANY_DIRECTIVES');

    const page = 'invoices(first: 100) { edges { node { id status content { items { name price } } transactions { id amount txHash } refund { id amount } } } }';
    const costly = await timed(server, aliases(10, page));
    expect(codes(costly.body)).toEqual(['QUERY_TOO_COSTLY']);
    // One such page is an ordinary dashboard query: within the cost limit (refused only for the missing token),
    // also when written with fragments as generated clients do.
    expect(codes((await timed(server, `{ ${page} }`)).body)).toEqual(['UNAUTHENTICATED']);
    const withFragments = `query { invoices(first: 100) { edges { node { ...Row } } } }
      fragment Row on Invoice { id status content { ...Content } transactions { ...Tx } refund { id amount } }
      fragment Content on InvoiceContent { items { name price } }
      fragment Tx on InvoiceTransaction { id amount txHash }`;
    expect(codes((await timed(server, withFragments)).body)).toEqual(['UNAUTHENTICATED']);
  });

  it('with introspection off no error suggests a name: fields, arguments, enum values, input fields', async () => {
    const cases: [string, Record<string, unknown>?][] = [
      ['{ invoic(id: "x") { id } }'],
      ['{ invoice(idd: "x") { id } }'],
      ['{ invoice(id: "x") { statu } }'],
      ['{ invoices(filter: { status: [DONEE] }) { totalCount } }'],
      ['mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { __typename } }', { i: { invoiceCurrency: 'USD', items: [], itemz: [] } }],
      ['query($s: [InvoiceStatus!]) { invoices(filter: { status: $s }) { totalCount } }', { s: ['DONEE'] }],
    ];
    for (const [query, variables] of cases) {
      const res = await server.graphql(query, variables);
      expect(res.body.errors?.length, query).toBeGreaterThan(0);
      for (const e of res.body.errors) expect(e.message, query).not.toMatch(/did you mean/i);
    }
    const intro = await server.graphql(getIntrospectionQuery());
    expect(intro.body.errors[0].message).toMatch(/introspection/i);
  });

  it('a test-mode and a live-mode token meet the same limits as an anonymous caller, before any resolver', async () => {
    const m = await server.liveMerchant();
    let tooDeep = 'id';
    for (let i = 0; i < GRAPHQL_LIMITS.maxDepth; i++) tooDeep = `company { name } a${i}: invoice(id: "x") { ${tooDeep} }`;
    const page = 'invoices(first: 100) { edges { node { id status content { items { name price } } transactions { id amount txHash } refund { id amount } } } }';
    const cases: [string, string][] = [
      [fragmentBomb(30), 'QUERY_TOO_COSTLY'],
      [aliases(GRAPHQL_LIMITS.maxAliases + 1, 'invoice(id: "x") { id }'), 'TOO_MANY_ALIASES'],
      [`{ ${tooDeep} }`, 'QUERY_TOO_DEEP'],
      [aliases(10, page), 'QUERY_TOO_COSTLY'],
      // A sandbox mutation is measured like any other operation: the limit, not the live token's 403, answers.
      [`mutation { ${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: advanceSandboxClock(input: { minutes: 1 }) { __typename }`).join(' ')} }`, 'TOO_MANY_ALIASES'],
    ];
    for (const token of [m.test.publicToken, m.live.publicToken]) {
      for (const [query, code] of cases) {
        const started = performance.now();
        const res = await server.graphql(query, undefined, token);
        expect(performance.now() - started).toBeLessThan(500);
        expect(res.body.data, query.slice(0, 80)).toBeUndefined();
        expect(codes(res.body), query.slice(0, 80)).toContain(code);
      }
    }
    // Under the limits each token is answered in its own mode.
    for (const [token, mode] of [[m.test.publicToken, 'TEST'], [m.live.publicToken, 'LIVE']] as const) {
      expect((await server.graphql('{ viewer { mode } }', undefined, token)).body.data.viewer.mode).toBe(mode);
    }
  });

  it('GET requests meet the same limits', async () => {
    const res = await server.request('GET', `/graphql?query=${encodeURIComponent(fragmentBomb(30))}`);
    expect(res.status).toBeLessThan(500);
    expect(codes(res.body)).toContain('QUERY_TOO_COSTLY');
  });

  it('refuses a GraphQL body over the limit with 413, and GraphiQL is off', async () => {
    const res = await server.request('POST', '/graphql', { json: { query: `{ __typename } #${'x'.repeat(300_000)}` } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const page = await server.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.text).not.toContain('GraphiQL');
  });
});

describe('GraphQL with introspection on', () => {
  const server = useServer('pglite');
  it('answers the standard introspection query (its depth is not an application query’s) and suggests names', async () => {
    const intro = await server.graphql(getIntrospectionQuery());
    expect(intro.body.errors).toBeUndefined();
    expect(intro.body.data.__schema.queryType.name).toBe('Query');
    // Introspection still has graphql-js's own depth bound.
    const deep = await server.graphql('{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }');
    expect(deep.body.errors[0].message).toMatch(/introspection depth/i);
    const suggestion = await server.graphql('{ invoic(id: "x") { id } }');
    expect(suggestion.body.errors[0].message).toMatch(/Did you mean "invoice"/);
  });
});
