// The API's reference: the OpenAPI document at GET /api/openapi.json (a documented route itself) and a page at
// GET /api/docs that renders it with Swagger UI, whose files the server serves from node_modules/swagger-ui-dist.
// Nothing is loaded from another host: no CDN, no online validator, no "explore" bar to fetch other documents.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { JsonText } from '../core/json.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { route, type Route } from '../http/router.ts';
import { CONTENT_TYPES, staticPage, type StaticPage } from '../http/static-page.ts';
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

/** Swagger UI from node_modules/swagger-ui-dist, rendering the document. */
function referencePage(): StaticPage {
  return staticPage({
    path: PAGE_PATH,
    packageName: 'swagger-ui-dist',
    files: {
      'swagger-ui.css': ['swagger-ui.css', CONTENT_TYPES.css],
      'swagger-ui-bundle.js': ['swagger-ui-bundle.js', CONTENT_TYPES.js],
      'favicon-32x32.png': ['favicon-32x32.png', CONTENT_TYPES.png],
    },
    own: { 'init.js': [INIT_SCRIPT, CONTENT_TYPES.js] },
    headers: pageSecurityHeaders([
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      // Swagger UI's stylesheet draws its icons as data: SVG.
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'none'",
    ]),
    html: (asset) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Payrail REST API reference</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}">
</head>
<body>
<div id="swagger-ui"><noscript>The reference needs JavaScript; the contract itself is at <a href="${DOCUMENT_PATH}">${DOCUMENT_PATH}</a>.</noscript></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${asset('init.js')}"></script>
</body>
</html>
`,
  });
}
