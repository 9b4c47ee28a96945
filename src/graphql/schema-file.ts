// GET /schema.graphql: the schema in SDL, printed from the running server's schema (the same text as the committed
// schema.graphql, which a test keeps in step). Client codegen can point at a deployment without introspection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { labelRoute } from '../http/route-label.ts';

export const SCHEMA_FILE_PATH = '/schema.graphql';

/** Answers GET/HEAD of the schema file; false for any other request. */
export function schemaFile(printed: () => string): (req: IncomingMessage, res: ServerResponse, url: URL) => boolean {
  let text: string | null = null;
  return (req, res, url) => {
    if (url.pathname !== SCHEMA_FILE_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    labelRoute(res, SCHEMA_FILE_PATH);
    text ??= `${printed()}\n`;
    res.writeHead(200, {
      'content-type': 'application/graphql; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'access-control-allow-origin': '*',
    });
    res.end(req.method === 'HEAD' ? undefined : text);
    return true;
  };
}
