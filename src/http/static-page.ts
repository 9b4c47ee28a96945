// A page made of an npm package's prebuilt files, served from node_modules as they are (Swagger UI at /api/docs,
// GraphiQL at /graphql): nothing is loaded from another host. Every answer carries the page's security headers. A
// package file is read on its first request and kept; its URL carries the package's version, so browsers keep it for
// good until the package is upgraded. Only the files named here are reachable, whatever the path says.
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { labelRoute } from './route-label.ts';

export const CONTENT_TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
} as const;

export interface StaticPageOptions {
  /** The page's path; its files are under `<path>/`. */
  path: string;
  /** The npm package the files come from. */
  packageName: string;
  /** Served name -> [path inside the package, content type]. */
  files: Record<string, readonly [string, string]>;
  /** Our own small files (no inline script or style: the CSP forbids them), served name -> [text, content type]. */
  own: Record<string, readonly [string, string]>;
  headers: Record<string, string>;
  /** The page's HTML; `asset(name)` is the URL of a served file. */
  html(asset: (name: string) => string): string;
  /** Whether a GET of the page's path is for the page (GraphiQL shares /graphql with the API); default yes. */
  isPageRequest?(req: IncomingMessage): boolean;
}

/** Answers GET/HEAD of the page and its files; false for any other request. */
export type StaticPage = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

export function staticPage(options: StaticPageOptions): StaticPage {
  const require = createRequire(import.meta.url);
  let vendor: { dir: string; version: string } | null = null;
  const vendorInfo = () => {
    if (vendor) return vendor;
    const manifest = require.resolve(`${options.packageName}/package.json`);
    const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string };
    return (vendor = { dir: path.dirname(manifest), version });
  };
  const cache = new Map<string, Buffer>();
  const read = (file: string) => {
    let body = cache.get(file);
    if (!body) cache.set(file, (body = fs.readFileSync(path.join(vendorInfo().dir, file))));
    return body;
  };
  const asset = (name: string) =>
    Object.hasOwn(options.files, name) ? `${options.path}/${name}?v=${encodeURIComponent(vendorInfo().version)}` : `${options.path}/${name}`;
  const send = (req: IncomingMessage, res: ServerResponse, type: string, body: string | Buffer, cache: string) => {
    res.writeHead(200, { ...options.headers, 'content-type': type, 'content-length': String(Buffer.byteLength(body)), 'cache-control': cache });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return function page(req, res, url) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = url.pathname;
    if (pathname === options.path || pathname === `${options.path}/`) {
      if (options.isPageRequest && !options.isPageRequest(req)) return false;
      labelRoute(res, options.path);
      send(req, res, CONTENT_TYPES.html, options.html(asset), 'no-cache');
      return true;
    }
    if (!pathname.startsWith(`${options.path}/`)) return false;
    const name = pathname.slice(options.path.length + 1);
    if (Object.hasOwn(options.own, name)) {
      const [text, type] = options.own[name]!;
      labelRoute(res, `${options.path}/:file`);
      send(req, res, type, text, 'no-cache');
      return true;
    }
    if (!Object.hasOwn(options.files, name)) return false;
    const [file, type] = options.files[name]!;
    labelRoute(res, `${options.path}/:file`);
    send(req, res, type, read(file), url.searchParams.get('v') === vendorInfo().version ? 'public, max-age=31536000, immutable' : 'no-cache');
    return true;
  };
}
