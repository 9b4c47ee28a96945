// GraphiQL at GET /graphql for a browser (Accept: text/html), the build Yoga's own page would load from a CDN
// (@graphql-yoga/graphiql: one self-contained UMD bundle with React, its stylesheet and Monaco's workers), served
// from node_modules with the security headers of every page. No script is inline: the page's setup is init.js.
import type { IncomingMessage } from 'node:http';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { CONTENT_TYPES, staticPage, type StaticPage } from '../http/static-page.ts';

export const GRAPHIQL_TITLE = 'Payrail GraphQL';

/** Monaco's workers (editor, JSON variables, GraphQL language), by the label Monaco asks for. */
const WORKERS = {
  editorWorkerService: 'editor.worker.js',
  json: 'json.worker.js',
  graphql: 'graphql.worker.js',
} as const;

/** The page at `path` (the GraphQL endpoint, which the page's queries go to). */
export function graphiqlPage(path: string): StaticPage {
  const options = {
    title: GRAPHIQL_TITLE,
    endpoint: path,
    // The merchant's token goes in the Headers tab: kept for this page only, never written to localStorage.
    shouldPersistHeaders: false,
  };
  return staticPage({
    path,
    packageName: '@graphql-yoga/graphiql',
    files: {
      'graphiql.css': ['dist/graphiql.css', CONTENT_TYPES.css],
      'yoga-graphiql.js': ['dist/yoga-graphiql.umd.js', CONTENT_TYPES.js],
      [WORKERS.editorWorkerService]: ['dist/monacoeditorwork/editor.worker.bundle.js', CONTENT_TYPES.js],
      [WORKERS.json]: ['dist/monacoeditorwork/json.worker.bundle.js', CONTENT_TYPES.js],
      [WORKERS.graphql]: ['dist/monacoeditorwork/graphql.worker..bundle.js', CONTENT_TYPES.js],
    },
    own: {
      'init.js': [
        `// Monaco's workers come from this server, like everything else on the page.
const workers = ${JSON.stringify(Object.fromEntries(Object.entries(WORKERS).map(([label, name]) => [label, `${path}/${name}`])))};
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_module, label) => workers[label] };
YogaGraphiQL.renderYogaGraphiQL(document.getElementById('graphiql'), ${JSON.stringify(options)});
`,
        CONTENT_TYPES.js,
      ],
      'page.css': ['html, body, #graphiql { height: 100%; margin: 0; }\n', CONTENT_TYPES.css],
    },
    headers: pageSecurityHeaders([
      "default-src 'none'",
      "script-src 'self'",
      "worker-src 'self'",
      // GraphiQL's editor (Monaco) and its menus set styles at run time: inline styles, never inline script.
      "style-src 'self' 'unsafe-inline'",
      // The stylesheet carries its fonts and icons as data: URLs.
      "font-src data:",
      "img-src 'self' data:",
      // Queries, and subscriptions over SSE, go to this same endpoint.
      "connect-src 'self'",
      "form-action 'none'",
    ]),
    // The same path answers GraphQL over GET: the page is only for a browser's navigation.
    isPageRequest: (req: IncomingMessage) => String(req.headers.accept ?? '').includes('text/html'),
    html: (asset) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${GRAPHIQL_TITLE}</title>
<link rel="stylesheet" href="${asset('graphiql.css')}">
<link rel="stylesheet" href="${asset('page.css')}">
<link rel="icon" href="data:,">
</head>
<body>
<div id="graphiql">Loading ${GRAPHIQL_TITLE}…<noscript> GraphiQL needs JavaScript; the schema is in schema.graphql.</noscript></div>
<script src="${asset('yoga-graphiql.js')}"></script>
<script src="${asset('init.js')}"></script>
</body>
</html>
`,
  });
}
