// Helpers of the black-box server tests: an environment per database, the demo merchant banner, log lines, the
// merchant CLI, and requests held in flight across a shutdown.
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { expect } from 'vitest';
import { checkApiExchange } from './contract.ts';
import { copyPgliteTemplate, freshDatabase, type DbKind, type TestDatabase } from './databases.ts';
import { credentialsFrom, http, parseJson, runCli, sleep, tempDir, type Credentials, type HttpResponse, type ServerProcess } from './processes.ts';

export const SAMPLE_INVOICE = { invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }] };
export const DEMO_BANNER = 'Created a demo merchant (shown once; keep these):';


export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** The pino JSON lines of a server's stdout (the demo merchant banner is not JSON and is left out). */
export function logLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .map((line) => parseJson(line))
    .filter((v): v is LogLine => typeof v === 'object' && v !== null && typeof (v as LogLine).level === 'number');
}

/** Splits a first-start stdout into the demo credentials and the remaining lines. */
export function splitDemoBanner(stdout: string): { demo: Credentials | null; banners: number; otherLines: string[] } {
  const lines = stdout.split('\n');
  const banners = lines.filter((l) => l === DEMO_BANNER).length;
  const start = lines.indexOf(DEMO_BANNER);
  if (start < 0) return { demo: null, banners, otherLines: lines.filter((l) => l !== '') };
  const tryAt = lines.findIndex((l, i) => i > start && l.startsWith('Try (test mode): curl'));
  expect(tryAt, 'the banner ends with a curl example').toBeGreaterThan(start);
  const demo = credentialsFrom(JSON.parse(lines.slice(start + 1, tryAt).join('\n')));
  // The curl example continues on one more line.
  const otherLines = [...lines.slice(0, start), ...lines.slice(tryAt + 2)].filter((l) => l !== '');
  return { demo, banners, otherLines };
}

export const createInvoice = (server: ServerProcess, token: string) => server.request('POST', '/api/invoices/v1/regular', { token, json: SAMPLE_INVOICE });

/** The merchant CLI; its last stderr line is the JSON error when it fails, the first says which database it used. */
export const cli = (env: Record<string, string>, ...args: string[]) => runCli('src/bin/merchant.ts', args, env);
/** The merchant CLI exactly as `npm run merchant` starts it. */
export const cliViaTsx = (env: Record<string, string>, ...args: string[]) => runCli('src/bin/merchant.ts', args, env, { viaTsx: true });
export const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

/**
 * Per database: the environment of a server and its CLI (one DATA_DIR each; PostgreSQL gets a fresh database).
 * `bare`: an empty DATA_DIR, as on a first start; otherwise the embedded database is there, migrated, empty.
 */
export async function environment(kind: DbKind, databases: TestDatabase[], bare = false): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: tempDir(`payrail-${kind}-`) };
  if (kind === 'pglite' && !bare) copyPgliteTemplate(path.join(env['DATA_DIR']!, 'pglite'));
  if (kind === 'postgres') {
    const db = await freshDatabase('postgres');
    databases.push(db);
    env['DATABASE_URL'] = db.url;
  }
  return env;
}

/** The database URL an environment's server and CLI open. */
export const databaseUrlOf = (env: Record<string, string>): string => env['DATABASE_URL'] ?? `pglite:${path.join(env['DATA_DIR']!, 'pglite')}`;

/** A merchant to call the API with: the printed demo merchant on PGlite, one made with the CLI on PostgreSQL. */
export async function someMerchant(server: ServerProcess, env: Record<string, string>): Promise<Credentials> {
  if (server.demo) return server.demo;
  const created = await cli(env, 'create', '--name', 'Shop');
  expect(created.code, created.stderr).toBe(0);
  return credentialsFrom(created.json);
}

export interface HeldRequest {
  /** The server's answer, once `release()` has sent the body. */
  response: Promise<HttpResponse>;
  /** Sends the body. */
  release(): void;
}

/**
 * Starts creating an invoice and holds it in flight: `Expect: 100-continue` makes the server acknowledge the request
 * once it has parsed the headers and handed it to the handler, which then waits for the body. Resolves on that
 * acknowledgement, so the request is observably in flight, with no timing guesses.
 */
export function holdInvoiceRequest(server: ServerProcess, token: string): Promise<HeldRequest> {
  const body = JSON.stringify(SAMPLE_INVOICE);
  return new Promise<HeldRequest>((resolveHeld, rejectHeld) => {
    let acknowledged = false;
    const response = new Promise<HttpResponse>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/api/invoices/v1/regular`,
        {
          method: 'POST',
          agent: false,
          timeout: 60_000,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            expect: '100-continue',
          },
        },
        (res) => {
          if (!acknowledged) rejectHeld(new Error(`answered ${res.statusCode} before 100 Continue`));
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('error', reject);
          res.on('end', () => {
            try {
              checkApiExchange({ method: 'POST', path: '/api/invoices/v1/regular', status: res.statusCode ?? 0, contentType: res.headers['content-type'], text });
            } catch (e) {
              return reject(e);
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseJson(text), text });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('in-flight request timed out')));
      req.on('error', (e) => {
        rejectHeld(e);
        reject(e);
      });
      req.on('continue', () => {
        acknowledged = true;
        resolveHeld({ response, release: () => req.end(body) });
      });
      req.flushHeaders();
    });
    response.catch(() => undefined); // awaited by the caller; keep an early failure from being "unhandled"
  });
}

/** Resolves once the server no longer accepts connections (its listening socket is closed), i.e. shutdown began. */
export async function waitUntilRefusing(server: ServerProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await http('GET', `${server.url}/health`, { timeoutMs: 5_000 }).then(
      (r) => `answered ${r.status}`,
      (e: NodeJS.ErrnoException) => e.code ?? e.message,
    );
    // Refused, or reset when the connect reached the kernel's backlog just before the close.
    if (outcome === 'ECONNREFUSED' || outcome === 'ECONNRESET') return;
    expect(outcome, 'until the close, /health still answers').toBe('answered 200');
    if (Date.now() > deadline) throw new Error(`the server kept accepting connections for ${timeoutMs} ms`);
    await sleep(20);
  }
}

/**
 * Starts the first server of a test and answers a merchant of it: on PostgreSQL one made with the CLI before the
 * start (no server yet: the CLI opens the database itself), on PGlite the demo merchant the first start prints.
 */
export async function startWithMerchant(kind: DbKind, env: Record<string, string>, start: () => Promise<ServerProcess>, name: string): Promise<Credentials> {
  if (kind === 'postgres') {
    const created = await runCli('src/bin/merchant.ts', ['create', '--name', name], env);
    expect(created.code, created.stderr).toBe(0);
    await start();
    return credentialsFrom(created.json);
  }
  const server = await start();
  return server.demo!;
}
