// The API reference at /api/docs in real headless Chromium: Swagger UI renders every tag and every operation of the
// document, from files our server serves, without a console error and without a single request to another host.
import { describe, expect, it } from 'vitest';
import { apiReference } from '../../src/features.ts';
import { CHROMIUM, screenshot, useBrowser } from '../support/browser.ts';
import { useServer } from '../support/server.ts';

type Json = Record<string, any>;
const doc = apiReference().document() as unknown as Json;
const operationsByTag = new Map<string, string[]>();
for (const item of Object.values(doc['paths'] as Record<string, Record<string, Json>>)) {
  for (const operation of Object.values(item)) {
    const tag = operation['tags'][0] as string;
    operationsByTag.set(tag, [...(operationsByTag.get(tag) ?? []), operation['operationId'] as string]);
  }
}

describe('the reference page /api/docs', () => {
  const server = useServer('pglite');

  it('is served with security headers and a CSP without inline script; its script and style are our files', async () => {
    for (const path of ['/api/docs', '/api/docs/init.js', '/api/docs/swagger-ui-bundle.js', '/api/docs/swagger-ui.css']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("connect-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(csp, path).not.toContain('unsafe-eval');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const body = await res.text();
      if (path === '/api/docs') {
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
        // Scripts only by URL, all of them on this server.
        expect(body.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull();
        for (const [, src] of body.matchAll(/(?:src|href)="([^"]+)"/g)) expect(src!.startsWith('/api/')).toBe(true);
      }
      if (path === '/api/docs/init.js') {
        expect(body).toContain('validatorUrl: null');
        expect(body).toContain("url: \"/api/openapi.json\"");
      }
    }
    // Only the files it needs: nothing else of node_modules is reachable, whatever the path says.
    for (const path of ['/api/docs/package.json', '/api/docs/..%2Fpackage.json', '/api/docs/index.html', '/api/docs/swagger-ui.js.map']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe('NOT_FOUND');
    }
    const post = await server.request('POST', '/api/docs');
    expect(post.status).toBe(404);
  });

  describe.runIf(CHROMIUM)('in Chromium', () => {
    const browser = useBrowser();

    it('renders the operations of every tag, with no console error and no request to another host', { timeout: 60_000 }, async () => {
      const { page, problems } = await browser.open({ width: 1280, height: 1000 });
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(`${server.url}/api/docs`);
      await page.locator('.swagger-ui .info .title').waitFor();
      expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Payrail REST API');
      expect([...operationsByTag.keys()].sort()).toEqual((doc['tags'] as { name: string }[]).map((t) => t.name).sort());
      for (const [tag, ids] of operationsByTag) {
        await page.locator(`#operations-tag-${tag}`).waitFor();
        for (const id of ids) await page.locator(`#operations-${tag}-${id}`).waitFor({ state: 'attached' });
        expect(await page.locator(`[id^="operations-${tag}-"]`).count(), tag).toBe(ids.length);
      }
      // One operation opened: its parameters, body example and responses (the Error one included) render.
      await page.locator('#operations-Invoices-createInvoice .opblock-summary').click();
      const detail = page.locator('#operations-Invoices-createInvoice');
      await detail.getByText('Idempotency-Key').first().waitFor();
      await detail.locator('.responses-table').first().waitFor();
      expect(await detail.textContent()).toContain('VALIDATION_FAILED');
      await screenshot(page, 'api-reference');
      expect(problems).toEqual([]);
      const origin = new URL(server.url).origin;
      expect(requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
      expect(requests).toContain(`${origin}/api/openapi.json`);
    });
  });
});
