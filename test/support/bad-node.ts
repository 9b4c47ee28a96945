// A chain node that fails in a chosen way, for the tests of what the service shows and logs of a failing node: it
// answers 500 echoing the request (URL, headers, body), answers garbage, never answers, refuses the credentials, or
// passes requests on to a working node (the fake chains) under a path prefix it strips. The mode can change at any time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const ORDINARY_HEADERS = new Set(['host', 'connection', 'accept', 'accept-encoding', 'accept-language', 'content-type', 'content-length', 'user-agent', 'sec-fetch-mode']);

export type BadNodeMode = 'echo500' | 'garbage' | 'hang' | 'unauthorized' | { proxyTo: string; strip: string };

export interface BadNode {
  readonly url: string;
  mode: BadNodeMode;
  /** Requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

export async function startBadNode(mode: BadNodeMode): Promise<BadNode> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      // The headers a client chose (credentials, keys) first: answers are often quoted only in part.
      const chosen = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !ORDINARY_HEADERS.has(name)));
      const echo = `${req.method} ${req.url} with ${JSON.stringify(chosen)}: ${body}`;
      const now = node.mode;
      if (now === 'hang') return;
      if (now === 'echo500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end(`cannot serve ${echo}`);
      if (now === 'unauthorized') return void res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Basic' }).end(`who is ${echo}`);
      if (now === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"result": <html>${echo}`);
      const path = req.url!.startsWith(now.strip) ? req.url!.slice(now.strip.length) : req.url!;
      fetch(`${now.proxyTo}${path}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : body }).then(
        async (answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const node: BadNode = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mode,
    get requests() {
      return requests;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return node;
}
