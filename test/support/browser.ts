// Real headless Chromium (Debian's package) driven by playwright-core, for the tests of the pages. Every page records
// its console errors and uncaught exceptions; screenshots go to test/artifacts/ (git-ignored).
import fs from 'node:fs';
import path from 'node:path';
import jsqr from 'jsqr';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, inject } from 'vitest';
import { ROOT } from './processes.ts';

export const CHROMIUM = inject('chromium');
export const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface TestPage {
  page: Page;
  /** Console errors and page errors so far. */
  problems: string[];
}

/** One browser for the enclosing describe block; pages in fresh contexts (no shared storage). */
export function useBrowser() {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: FLAGS });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
  });
  return {
    async open(options: { width?: number; height?: number } = {}): Promise<TestPage> {
      const context = await browser!.newContext({ viewport: { width: options.width ?? 1024, height: options.height ?? 900 } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      contexts.push(context);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      return { page, problems };
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// jsqr is CommonJS with an ES-style default export: Node hands over the module object.
const jsQR = (jsqr as unknown as { default: (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null }).default;

/** The text of the QR code an element shows, read from its pixels as a phone camera would. */
export async function readQr(page: Page, selector: string): Promise<string | null> {
  const png = PNG.sync.read(await page.locator(selector).screenshot());
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
}

/** Form controls without an accessible label (a <label>, aria-label or aria-labelledby). */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => {
        const control = el as HTMLInputElement;
        if (control.type === 'hidden') return false;
        return !(control.labels?.length || control.getAttribute('aria-label') || control.getAttribute('aria-labelledby'));
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}
