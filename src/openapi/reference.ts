// The API's reference: the OpenAPI document at GET /api/openapi.json (a documented route itself) and a page at
// GET /api/docs that renders it with Swagger UI, whose files the server serves from node_modules/swagger-ui-dist.
// Nothing is loaded from another host: no CDN, no online validator, no "explore" bar to fetch other documents.
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { JsonText } from '../core/json.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { route, type Route } from '../http/router.ts';
import { buildOpenApiDocument, type DocumentOptions, type OpenApiDocument } from './document.ts';

export const DOCUMENT_PATH = '/api/openapi.json';
export const PAGE_PATH = '/api/docs';
export const REFERENCE_TAG = { name: 'Reference', description: 'This contract, machine-readable.' };

const openApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) })
  .meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document.' });

export interface ApiReference {
  /** GET /api/openapi.json, for the router. */
  routes: Route<unknown>[];
  document(): OpenApiDocument;
  /** The document as committed in openapi.json: two-space JSON and a final newline. */
  text(): string;
  /** Answers GET/HEAD /api/docs and its files; false for any other request. */
  page(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
}

/** The reference of `apiRoutes` (plus its own route); the document is built on first use and kept. */
export function createApiReference(apiRoutes: readonly Route<any>[], options: DocumentOptions): ApiReference {
  let text: string | null = null;
  const documentRoute = route({
    method: 'GET',
    path: DOCUMENT_PATH,
    auth: 'none',
    doc: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description: `The contract of the REST API, generated from the code that validates requests and presents answers; rendered at ${PAGE_PATH}.`,
      tag: REFERENCE_TAG.name,
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: openApiDocumentSchema } },
    },
    handler: async () => ({ status: 200, body: new JsonText(reference.text()), headers: { 'cache-control': 'no-cache' } }),
  });
  const routes = [...apiRoutes, documentRoute] as Route<unknown>[];
  const tags = options.tags.some((t) => t.name === REFERENCE_TAG.name) ? options.tags : [...options.tags, REFERENCE_TAG];
  const reference: ApiReference = {
    routes: [documentRoute as Route<unknown>],
    document: () => JSON.parse(reference.text()) as OpenApiDocument,
    text: () => (text ??= `${JSON.stringify(buildOpenApiDocument(routes, { ...options, tags }), null, 2)}\n`),
    page: referencePage(),
  };
  return reference;
}

// Swagger UI's files, by the name they are served under; read once, on first request.
const VENDOR_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const INIT_SCRIPT = `// Renders ${DOCUMENT_PATH}: no online validator, no URL taken from the query string.
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(DOCUMENT_PATH)},
  dom_id: '#swagger-ui',
  validatorUrl: null,
  queryConfigEnabled: false,
  deepLinking: true,
  docExpansion: 'list',
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

function referencePage() {
  const require = createRequire(import.meta.url);
  let vendor: { dir: string; version: string } | null = null;
  const vendorInfo = () => {
    if (vendor) return vendor;
    const manifest = require.resolve('swagger-ui-dist/package.json');
    const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string };
    return (vendor = { dir: path.dirname(manifest), version });
  };
  const files = new Map<string, Buffer>();
  const file = (name: string) => {
    let body = files.get(name);
    if (!body) files.set(name, (body = fs.readFileSync(path.join(vendorInfo().dir, name))));
    return body;
  };
  const headers = pageSecurityHeaders([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // Swagger UI's stylesheet draws its icons as data: SVG.
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'none'",
  ]);
  const send = (req: IncomingMessage, res: ServerResponse, type: string, body: string | Buffer, cache: string) => {
    res.writeHead(200, { ...headers, 'content-type': type, 'content-length': String(Buffer.byteLength(body)), 'cache-control': cache });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return function page(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = url.pathname;
    if (pathname === PAGE_PATH || pathname === `${PAGE_PATH}/`) {
      const v = encodeURIComponent(vendorInfo().version);
      const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Payrail REST API reference</title>
<link rel="stylesheet" href="${PAGE_PATH}/swagger-ui.css?v=${v}">
<link rel="icon" type="image/png" href="${PAGE_PATH}/favicon-32x32.png?v=${v}">
</head>
<body>
<div id="swagger-ui"><noscript>The reference needs JavaScript; the contract itself is at <a href="${DOCUMENT_PATH}">${DOCUMENT_PATH}</a>.</noscript></div>
<script src="${PAGE_PATH}/swagger-ui-bundle.js?v=${v}"></script>
<script src="${PAGE_PATH}/init.js"></script>
</body>
</html>
`;
      send(req, res, 'text/html; charset=utf-8', html, 'no-cache');
      return true;
    }
    if (!pathname.startsWith(`${PAGE_PATH}/`)) return false;
    const name = pathname.slice(PAGE_PATH.length + 1);
    if (name === 'init.js') {
      send(req, res, 'text/javascript; charset=utf-8', INIT_SCRIPT, 'no-cache');
      return true;
    }
    const type = Object.hasOwn(VENDOR_FILES, name) ? VENDOR_FILES[name] : undefined;
    if (!type) return false;
    // The version is in the URL: cached for good until Swagger UI is upgraded.
    send(req, res, type, file(name), url.searchParams.get('v') === vendorInfo().version ? 'public, max-age=31536000, immutable' : 'no-cache');
    return true;
  };
}
