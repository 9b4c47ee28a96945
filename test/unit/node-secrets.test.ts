// A chain node's secrets (a key in its URL's path or query, user:password, a header value) never leave the process:
// the node is shown by its display name, and errors that come out of a node client are rebuilt without them. Checked
// on real errors: Node's fetch (undici) refusing a URL with credentials, failing to connect and timing out, viem's
// HttpRequestError (url, details, metaMessages, body) and our own HTTP client against a node that echoes the request,
// each written to a log line the way pino writes it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http as viemHttp } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainsFileSchema, solanaChainSchema } from '../../src/chains/config.ts';
import { HttpApi } from '../../src/chains/http.ts';
import { failureOf, NodeEndpoint, nodeEndpoint } from '../../src/chains/node-endpoint.ts';
import { ScrubbedAdapter, type NodeAdapter } from '../../src/chains/registry.ts';
import { BitcoinRpc } from '../../src/chains/utxo/rpc.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { createLogger } from '../../src/logger.ts';
import { freePort } from '../support/net.ts';

const SECRETS = ['PATHKEY0123456789', 'QUERYKEY0123456789', 'USERSECRET', 'PASSWORDSECRET', 'HEADERSECRET0123'];
const basic = Buffer.from('USERSECRET:PASSWORDSECRET').toString('base64');

/** The log line pino writes for `fields` (errors with their properties and causes). */
function logLine(fields: Record<string, unknown>, endpoint?: NodeEndpoint): string {
  let line = '';
  const root = createLogger('info', { write: (l: string) => void (line = l) });
  const logger = endpoint ? root.child({ node: endpoint.name }, { formatters: { log: (f) => endpoint.scrubLog(f as Record<string, unknown>) } }) : root;
  logger.error(fields, 'a node failed');
  return line;
}

/** What `promise` fails with (the test fails if it does not). */
async function failure<E = Error>(promise: Promise<unknown>): Promise<E> {
  return promise.then(
    () => expect.unreachable('expected a failure'),
    (e: unknown) => e as E,
  );
}

/** The secrets in `text`, whole or cut (their first 10 characters: a quote of an answer may end inside one). */
const leaked = (text: string) => [...SECRETS, basic].filter((s) => text.includes(s.slice(0, 10)));

/** A node that answers every request 500 with what it was sent: the URL, the headers, the body. */
let echo: http.Server;
let echoPort: number;
/** A node that never answers. */
let silent: http.Server;
let silentPort: number;

beforeAll(async () => {
  echo = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(`cannot serve ${req.url} with ${JSON.stringify(req.headers)}: ${body}`));
  });
  silent = http.createServer(() => undefined);
  for (const server of [echo, silent]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
  silentPort = (silent.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const server of [echo, silent]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const nodeUrl = (port: number, credentials = false) =>
  `http://${credentials ? 'USERSECRET:PASSWORDSECRET@' : ''}127.0.0.1:${port}/rpc/PATHKEY0123456789?api-key=QUERYKEY0123456789`;
const endpointFor = (port: number, label?: string) =>
  new NodeEndpoint({ url: nodeUrl(port, true), label, headers: { 'x-api-key': 'HEADERSECRET0123' } });

describe('the display name of a node', () => {
  it('is scheme://host:port of its URL, never its path, query or credentials; or the label CHAINS_FILE gives it', () => {
    expect(nodeEndpoint({ rpcUrl: 'https://USERSECRET:PASSWORDSECRET@eth.example/v3/PATHKEY0123456789?key=QUERYKEY0123456789' }).name).toBe('https://eth.example:443');
    expect(nodeEndpoint({ apiUrl: 'http://toncenter.internal/api/v2' }).name).toBe('http://toncenter.internal:80');
    expect(nodeEndpoint({ rpcUrl: 'http://[::1]:8899/PATHKEY0123456789' }).name).toBe('http://[::1]:8899');
    expect(nodeEndpoint({ apiUrl: 'https://api.trongrid.io', label: 'trongrid main', apiKey: 'HEADERSECRET0123' }).name).toBe('trongrid main');
  });

  it('comes with what requests need: the URL without credentials, which go in a Basic header beside the configured ones', () => {
    const endpoint = endpointFor(8545);
    expect(endpoint.url.href).toBe('http://127.0.0.1:8545/rpc/PATHKEY0123456789?api-key=QUERYKEY0123456789');
    expect(endpoint.headers).toEqual({ 'x-api-key': 'HEADERSECRET0123', authorization: `Basic ${basic}` });
  });

  it('label and headers are checked in CHAINS_FILE; an Authorization header beside user:password is refused', () => {
    const solana = (extra: Record<string, unknown>) => ({ solana: { rpcUrl: 'http://u:p@127.0.0.1:8899', address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', ...extra } });
    const issues = (file: unknown) => chainsFileSchema.safeParse(file).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues(solana({ label: 'solana rpc', headers: { 'x-api-key': 'k' }, timeoutMs: 5_000 }))).toBeUndefined();
    expect(issues(solana({ headers: { Authorization: 'Bearer k' } }))).toEqual([
      'solana.headers: must not hold an Authorization header when the URL carries user:password (that is sent as one)',
    ]);
    const fieldIssues = (node: unknown) => solanaChainSchema.safeParse(node).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(fieldIssues(solana({ headers: { 'bad name': 'k', ok: 'two\nlines' }, label: 'a\u0007b', timeoutMs: 10 }).solana)).toEqual([
      'label: must be printable text',
      'headers.ok: must be one line',
      'headers.bad name: must be an HTTP header name',
      'timeoutMs: Too small: expected number to be >=100',
    ]);
  });
});

describe('errors out of a node client, rewritten by its endpoint', () => {
  it("fetch's refusal of a URL with credentials repeats the URL: rewritten, the node is named and nothing else is", async () => {
    const raw = await failure(fetch(nodeUrl(echoPort, true)));
    expect(raw).toBeInstanceOf(TypeError);
    expect(leaked(logLine({ err: raw }))).toEqual(['PATHKEY0123456789', 'QUERYKEY0123456789', 'USERSECRET', 'PASSWORDSECRET']);
    const endpoint = endpointFor(echoPort);
    const clean = endpoint.scrubError(raw);
    const line = logLine({ err: clean });
    expect(leaked(line)).toEqual([]);
    expect(clean.message).toBe(`Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:${echoPort}`);
    expect(JSON.parse(line).err).toMatchObject({ type: 'NodeError', message: clean.message });
  });

  it("undici's connection failure keeps its cause and code (what an operator needs), still without the URL", async () => {
    const port = await freePort();
    const raw = await failure(fetch(`http://127.0.0.1:${port}/rpc/PATHKEY0123456789?api-key=QUERYKEY0123456789`));
    const clean = endpointFor(port).scrubError(raw);
    expect(clean).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED', message: `connect ECONNREFUSED 127.0.0.1:${port}` } });
    expect(failureOf(raw)).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(leaked(logLine({ err: clean }))).toEqual([]);
  });

  it('a timeout is said in words, and the node that did not answer is named', async () => {
    const api = new HttpApi(endpointFor(silentPort, 'silent node'), { timeoutMs: 200 });
    const raw = await failure(api.post('/wallet/getnowblock', {}));
    expect(raw.message).toBe('POST /wallet/getnowblock at silent node failed: no answer in time');
  });

  it("viem's HttpRequestError carries the URL, the node's echo of our headers and key in url, details and metaMessages: all of it goes", async () => {
    const client = createPublicClient({
      transport: viemHttp(nodeUrl(echoPort, true), { retryCount: 0, fetchOptions: { headers: { 'x-api-key': 'HEADERSECRET0123' } } }),
    });
    const raw = await failure<Error & { url: string; details: string }>(client.getBlockNumber());
    expect(raw.name).toBe('HttpRequestError');
    expect(raw.url).toContain('PATHKEY0123456789');
    expect(raw.details).toContain('HEADERSECRET0123');
    // viem sends user:password as a Basic header, which the node echoed.
    expect(leaked(logLine({ err: raw }))).toEqual(['PATHKEY0123456789', 'QUERYKEY0123456789', 'HEADERSECRET0123', basic]);
    const endpoint = endpointFor(echoPort, 'evm main');
    const clean = endpoint.scrubError(raw);
    const line = logLine({ err: clean });
    expect(leaked(line)).toEqual([]);
    expect(clean.message).toContain('URL: evm main');
    expect(Object.keys(clean)).not.toContain('url');
    // The same error logged as it is through the node's logger comes out just as clean.
    expect(leaked(logLine({ err: raw, detail: raw.details, urls: [raw.url] }, endpoint))).toEqual([]);
  });

  it("our clients quote a node's answer (which echoes the path, query, headers and credentials) scrubbed before it is cut", async () => {
    const endpoint = endpointFor(echoPort);
    const tron = await failure(new HttpApi(endpoint, { headers: { 'TRON-PRO-API-KEY': 'HEADERSECRET0123' } }).post('/wallet/getnowblock', {}));
    expect(tron.message).toMatch(new RegExp(`^POST /wallet/getnowblock at http://127\\.0\\.0\\.1:${echoPort} answered 500: cannot serve \\[redacted\\]/wallet/getnowblock\\?\\[redacted\\] with `));
    const utxo = await failure(new BitcoinRpc(endpoint).call('getblockchaininfo'));
    expect(utxo.message).toMatch(new RegExp(`^getblockchaininfo: the node http://127\\.0\\.0\\.1:${echoPort} answered HTTP 500 cannot serve \\[redacted\\]/\\?\\[redacted\\] with `));
    for (const e of [tron, utxo]) expect(leaked(logLine({ err: e }))).toEqual([]);
    // A plain cut of an answer can end inside a secret, which then is not found whole any more.
    const answer = `${'x'.repeat(165)} authorization: Basic ${basic}`;
    expect(leaked(answer.slice(0, 200))).toEqual([basic]);
    expect(answer.slice(0, 200)).not.toContain(basic);
    expect(leaked(endpoint.quote(answer))).toEqual([]);
  });

  it('takes out a header token quoted without its scheme, and a key quoted decoded or encoded', () => {
    const endpoint = new NodeEndpoint({ url: 'https://rpc.example/k/a%2Fb%3DPATHKEY0123456789', headers: { Authorization: 'Bearer HEADERSECRET0123' } });
    expect(endpoint.scrub('invalid token HEADERSECRET0123 for a/b=PATHKEY0123456789 (a%2Fb%3DPATHKEY0123456789)')).toBe('invalid token [redacted] for [redacted] ([redacted])');
  });

  it('leaves text without secrets as it is, and keeps refusals of our own (AppError) as they are', () => {
    const endpoint = endpointFor(8545);
    expect(endpoint.scrub('getSignaturesForAddress failed: Node is behind by 42 slots (-32005)')).toBe('getSignaturesForAddress failed: Node is behind by 42 slots (-32005)');
    const refusal = new AppError('SERVICE_UNAVAILABLE', 'Sending on ton is not supported');
    expect(endpoint.scrubError(refusal)).toBe(refusal);
    expect(endpoint.scrubError(new AppError('CONFLICT', 'node said PATHKEY0123456789'))).toMatchObject({ code: 'CONFLICT', message: 'node said [redacted]' });
  });
});

describe('a node adapter behind ScrubbedAdapter', () => {
  it('throws only rewritten errors, from every call', async () => {
    const endpoint = endpointFor(echoPort, 'solana main');
    const failing = () => fetch(nodeUrl(echoPort, true));
    const inner = {
      network: 'solana',
      connect: failing,
      initialState: failing,
      scan: failing,
      allocateAddress: failing,
      send: failing,
      watchedBalances: failing,
    } as unknown as NodeAdapter;
    const adapter = new ScrubbedAdapter(inner, endpoint);
    const calls = [adapter.connect(), adapter.initialState(), adapter.scan(null), adapter.allocateAddress({} as never), adapter.send({} as never), adapter.watchedBalances([])];
    for (const call of calls) {
      const e = await failure(call);
      expect(e.message).toBe('Request cannot be constructed from a URL that includes credentials: solana main');
      expect(leaked(logLine({ err: e }))).toEqual([]);
    }
  });
});
