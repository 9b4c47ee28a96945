// GraphiQL at /graphql in real headless Chromium, with every request to another host blocked: it renders from files
// our server serves out of node_modules, reads the schema, runs a query against the server and shows the answer,
// without a console error. Its answers carry the security headers of every page; GRAPHIQL=0 turns it off.
import { describe, expect, it } from 'vitest';
import { CHROMIUM, screenshot, useBrowser } from '../support/browser.ts';
import { useServer, type TestServer } from '../support/server.ts';

const FILES = ['/graphql/graphiql.css', '/graphql/page.css', '/graphql/yoga-graphiql.js', '/graphql/init.js', '/graphql/editor.worker.js', '/graphql/json.worker.js', '/graphql/graphql.worker.js'];
const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

async function createInvoice(server: TestServer): Promise<string> {
  const merchant = await server.merchant();
  const created = await server.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'Tea', price: 3 }] } });
  return created.body.id as string;
}

describe('GraphiQL at /graphql', () => {
  const server = useServer('pglite');

  it('is served with the pages’ security headers (no inline or eval script, no framing); its files are ours', async () => {
    const page = await fetch(`${server.url}/graphql`, { headers: html });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const body = await page.text();
    // Scripts only by URL, every URL on this server (or data:).
    expect(body.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull();
    expect(body).not.toMatch(/\sstyle=|<style/);
    const urls = [...body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const url of urls) expect(url.startsWith('/graphql/') || url.startsWith('data:'), url).toBe(true);
    expect(urls.map((u) => u.split('?')[0]!).filter((u) => u.startsWith('/graphql/')).sort()).toEqual(FILES.filter((f) => !f.includes('worker')).sort());

    for (const path of ['/graphql', ...FILES]) {
      const res = path === '/graphql' ? page : await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = (res.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("worker-src 'self'");
      expect(csp, path).toContain("connect-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp.join(';'), path).not.toContain('unsafe-eval');
      // Inline styles only (GraphiQL's editor sets them at run time); never inline script.
      expect(csp.filter((d) => d.includes('unsafe-inline')), path).toEqual(["style-src 'self' 'unsafe-inline'"]);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      if (path !== '/graphql') await res.arrayBuffer();
    }
    // Versioned package files are cached for good; the page and our own scripts are not.
    const bundle = urls.find((u) => u.startsWith('/graphql/yoga-graphiql.js?v='))!;
    expect((await fetch(`${server.url}${bundle}`, { method: 'HEAD' })).headers.get('cache-control')).toContain('immutable');
    expect(page.headers.get('cache-control')).toBe('no-cache');

    // Nothing else of node_modules is reachable, whatever the path says.
    for (const path of ['/graphql/package.json', '/graphql/..%2Fpackage.json', '/graphql/dist/yoga-graphiql.umd.js', '/graphql/yoga-graphiql.es.js', '/graphql/README.md']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
    }
  });

  it('leaves the GraphQL API on the same path as it was: GET and POST without Accept: text/html are queries', async () => {
    const get = await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json' } });
    expect(await get.json()).toEqual({ data: { __typename: 'Query' } });
    const post = await server.graphql('{ __typename }');
    expect(post.body).toEqual({ data: { __typename: 'Query' } });
  });

  describe.runIf(CHROMIUM)('in Chromium, with every other host unreachable', () => {
    const browser = useBrowser();

    it('renders, reads the schema, runs a query against the server and shows the answer, with no console error', { timeout: 90_000 }, async () => {
      const id = await createInvoice(server);
      const { page, problems } = await browser.open({ width: 1280, height: 900 });
      const origin = new URL(server.url).origin;
      const requests: string[] = [];
      const blocked: string[] = [];
      await page.context().route('**/*', (route) => {
        const url = route.request().url();
        requests.push(url);
        if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
        blocked.push(url);
        return route.abort('blockedbyclient');
      });
      const query = `{ invoice(id: "${id}") { id status } }`;
      const response = await page.goto(`${server.url}/graphql?query=${encodeURIComponent(query)}`);
      expect(response?.headers()).toMatchObject({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.getByRole('button', { name: /Execute query/i }).first().waitFor();
      expect(await page.title()).toBe('Payrail GraphQL');

      // The schema, read by introspection, is in the documentation explorer.
      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().waitFor();

      await page.getByRole('button', { name: /Execute query/i }).first().click();
      // The result editor shows spaces as no-break spaces.
      const answer = async () => ((await page.getByLabel('Result Window').textContent()) ?? '').replace(/\u00a0/g, ' ');
      await expect.poll(answer, { timeout: 15_000 }).toContain(id);
      expect(JSON.parse(await answer())).toEqual({ data: { invoice: { id, status: 'CREATED' } } });
      await screenshot(page, 'graphiql');

      // A merchant query with the token typed into the Headers tab: answered for that merchant; the token stays
      // out of localStorage.
      const merchant = await server.merchant({ name: 'Headers Tab Shop' });
      await page.goto(`${server.url}/graphql?query=${encodeURIComponent('{ viewer { name } }')}`);
      await page.getByRole('button', { name: /Execute query/i }).first().waitFor();
      await page.getByRole('button', { name: 'Headers' }).click();
      await page.locator('section[aria-label="Headers"] .monaco-editor').filter({ visible: true }).click();
      await page.keyboard.type(`{"authorization": "Bearer ${merchant.publicToken}`);
      await page.getByRole('button', { name: /Execute query/i }).first().click();
      await expect.poll(answer, { timeout: 15_000 }).toContain('Headers Tab Shop');
      // GraphiQL saves its tabs (headers too, where allowed) a moment after an edit: once an edit made after the
      // token's is saved, the token must not be with it.
      await page.getByLabel('Operation Editor').locator('.monaco-editor').click();
      await page.keyboard.press('End');
      await page.keyboard.type(' # saved');
      const saved = () => page.evaluate(() => JSON.stringify({ ...localStorage }));
      await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:tabState')), { timeout: 10_000 }).toContain('# saved');
      expect(await saved()).not.toContain(merchant.publicToken);

      expect(problems).toEqual([]);
      // No request left for another host (none was even tried).
      expect(blocked).toEqual([]);
      expect(requests.length).toBeGreaterThan(5);
      // Monaco's workers came from here too.
      expect(requests.map((u) => new URL(u).pathname)).toEqual(expect.arrayContaining(['/graphql/editor.worker.js', '/graphql/graphql.worker.js']));
    });
  });
});

describe('GraphiQL with GRAPHIQL=0', () => {
  const server = useServer('pglite', { GRAPHIQL: '0' });

  it('is not served: /graphql stays the API, its files are not found', async () => {
    const page = await fetch(`${server.url}/graphql`, { headers: html });
    expect(page.headers.get('content-type')).not.toContain('text/html');
    expect(await page.text()).not.toContain('GraphiQL');
    for (const path of FILES) expect((await server.request('GET', path)).status, path).toBe(404);
  });
});
