// Black-box lifecycle tests: the real entry point (src/main.ts) and merchant CLI run as child processes on
// embedded PGlite in a temporary DATA_DIR. Nothing here imports the server code.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// The children get exactly what each test sets, whatever the caller's shell has.
import { CONFIG_VARS } from '../support/processes.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 15_000;
const SAMPLE_INVOICE = { invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }] };
const DEMO_BANNER = 'Created a demo merchant (shown once; keep these):';


// ---------------------------------------------------------------------------------------------------------------
// Process and HTTP helpers

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Proc {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once the process has exited (never rejects). */
  exited: Promise<Exit>;
  exit: Exit | null;
  /** Resolves when `predicate(stdout)` holds; rejects on timeout or if the process exits first. */
  waitForStdout(predicate: (stdout: string) => boolean, what: string, timeoutMs?: number): Promise<void>;
}

const children = new Set<Proc>();
const tempDirs: string[] = [];

function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-lifecycle-'));
  tempDirs.push(dir);
  return dir;
}

function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARS) delete env[name];
  return { ...env, ...vars };
}

function launch(script: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const proc: Proc = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exit: null,
    exited: new Promise<Exit>((resolve) => {
      // 'close' (not 'exit') so that all of stdout/stderr has been read.
      child.once('close', (code, signal) => {
        proc.exit = { code, signal };
        children.delete(proc);
        notify();
        resolve(proc.exit);
      });
      child.once('error', () => {
        proc.exit ??= { code: null, signal: null };
        children.delete(proc);
        notify();
        resolve(proc.exit);
      });
    }),
    waitForStdout(predicate, what, timeoutMs = STARTUP_TIMEOUT_MS) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(stdout)) return done();
          if (proc.exit) return done(new Error(`process exited (${JSON.stringify(proc.exit)}) before ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        };
        const timer = setTimeout(() => done(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`)), timeoutMs);
        const done = (error?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
  };
  children.add(proc);
  return proc;
}

/** Waits for the process to exit, killing it (and failing) if it takes longer than `timeoutMs`. */
async function waitForExit(proc: Proc, timeoutMs = EXIT_TIMEOUT_MS): Promise<Exit & { ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const result = await Promise.race([proc.exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
    throw new Error(`process did not exit within ${timeoutMs} ms\nstdout:\n${proc.stdout}\nstderr:\n${proc.stderr}`);
  }
  return { ...result, ms: Date.now() - started };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  // Tests read whatever shape the endpoint returns.
  body: any;
  text: string;
}

/**
 * One request on its own connection (`agent: false`, so `Connection: close`): no pooled keep-alive socket
 * can be reused across a server restart or race the server's keep-alive timeout.
 */
function http(method: string, url: string, options: { token?: string; json?: unknown; timeoutMs?: number } = {}): Promise<HttpResponse> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string | number> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseJson(text), text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// Server and CLI

interface Server {
  proc: Proc;
  url: string;
  dataDir: string;
}

const LISTENING = (stdout: string) => logLines(stdout).some((l) => l.msg === 'payrail listening');

/** Starts src/main.ts and resolves once GET /health answers 200 {"status":"ok"} and the start-up logs are out. */
async function startServer(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = launch('src/main.ts', [], { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extraEnv });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (proc.exit) throw new Error(`server exited during start-up (${JSON.stringify(proc.exit)})\nstdout:\n${proc.stdout}\nstderr:\n${proc.stderr}`);
    if (Date.now() > deadline) throw new Error(`server not healthy after ${STARTUP_TIMEOUT_MS} ms\nstdout:\n${proc.stdout}\nstderr:\n${proc.stderr}`);
    const res = await http('GET', `${url}/health`, { timeoutMs: 2_000 }).catch(() => null);
    if (res?.status === 200) {
      expect(res.body).toEqual({ status: 'ok' });
      break;
    }
    await sleep(100);
  }
  // /health answers as soon as the port listens; the demo merchant and the admin state file come after it,
  // and "payrail listening" is logged last.
  await proc.waitForStdout(LISTENING, '"payrail listening"', Math.max(1_000, deadline - Date.now()));
  return { proc, url, dataDir };
}

async function stopServer(server: Server): Promise<Exit & { ms: number }> {
  server.proc.child.kill('SIGTERM');
  return waitForExit(server.proc);
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

async function cli(dataDir: string, ...args: string[]): Promise<CliResult> {
  const proc = launch('src/cli/merchant.ts', args, { DATA_DIR: dataDir });
  const { code } = await waitForExit(proc, 45_000);
  return { code, stdout: proc.stdout, stderr: proc.stderr, json: parseJson(proc.stdout) };
}

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** The pino JSON lines of a server's stdout (the demo merchant banner is not JSON and is left out). */
function logLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .map((line) => parseJson(line))
    .filter((v): v is LogLine => typeof v === 'object' && v !== null && typeof (v as LogLine).level === 'number');
}

interface Credentials {
  companyId: string;
  publicToken: string;
  secretKey: string;
}

/** Splits a first-start stdout into the demo credentials and the remaining lines. */
function splitDemoBanner(stdout: string): { demo: Credentials | null; banners: number; otherLines: string[] } {
  const lines = stdout.split('\n');
  const banners = lines.filter((l) => l === DEMO_BANNER).length;
  const start = lines.indexOf(DEMO_BANNER);
  if (start < 0) return { demo: null, banners, otherLines: lines.filter((l) => l !== '') };
  const tryAt = lines.findIndex((l, i) => i > start && l.startsWith('Try: curl'));
  expect(tryAt, 'the banner ends with a curl example').toBeGreaterThan(start);
  const demo = JSON.parse(lines.slice(start + 1, tryAt).join('\n')) as Credentials;
  // The curl example continues on one more line.
  const otherLines = [...lines.slice(0, start), ...lines.slice(tryAt + 2)].filter((l) => l !== '');
  return { demo, banners, otherLines };
}

const createInvoice = (server: Server, token: string) =>
  http('POST', `${server.url}/api/invoices/v1/regular`, { token, json: SAMPLE_INVOICE });

afterAll(async () => {
  for (const proc of [...children]) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------------

describe('server lifecycle on embedded PGlite', { timeout: 120_000 }, () => {
  // The cases build on each other: one DATA_DIR, the first server, the CLI against it, a restart.
  const dataDir = tempDataDir();
  let first: Server | undefined;
  let demo: Credentials | undefined;
  let acme: Credentials | undefined;
  /** Acme's token after rotation. */
  let acmeToken: string | undefined;
  const secretsSeen: string[] = [];

  it('first start prints a demo merchant once, whose token works; logs are JSON and carry no credentials', async () => {
    first = await startServer(dataDir);
    const { demo: printed, banners, otherLines } = splitDemoBanner(first.proc.stdout);
    expect(banners).toBe(1);
    expect(printed).not.toBeNull();
    demo = printed!;
    expect(Object.keys(demo).sort()).toEqual(['companyId', 'publicToken', 'secretKey']);
    expect(demo.companyId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(demo.publicToken).toMatch(/^pk_\S+$/);
    expect(demo.secretKey).toMatch(/^sk_\S+$/);
    secretsSeen.push(demo.publicToken, demo.secretKey);

    const res = await createInvoice(first, demo.publicToken);
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('created');

    // Everything outside the banner is a pino JSON line; none carries the demo credentials.
    expect(otherLines.length).toBeGreaterThan(0);
    for (const line of otherLines) {
      const parsed = parseJson(line) as LogLine | undefined;
      expect(parsed, `not a JSON log line: ${line}`).toMatchObject({ level: expect.any(Number), msg: expect.any(String), time: expect.any(String) });
      expect(line).not.toContain(demo.publicToken);
      expect(line).not.toContain(demo.secretKey);
    }
    expect(first.proc.stderr).not.toContain(demo.publicToken);
    expect(first.proc.stderr).not.toContain(demo.secretKey);

    // The admin state file is there for the CLI while the server runs.
    const state = JSON.parse(fs.readFileSync(path.join(dataDir, 'admin.json'), 'utf8')) as { pid: number; url: string; token: string };
    expect(state.pid).toBe(first.proc.child.pid);
    expect(state.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fs.statSync(path.join(dataDir, 'admin.json')).mode & 0o077).toBe(0);
    secretsSeen.push(state.token);
  });

  it('the merchant CLI manages merchants through the running server', async () => {
    const server = first!;
    const created = await cli(dataDir, 'create', '--name', 'Acme', '--logo-url', 'https://acme.example/logo.png');
    expect(created.code, created.stderr).toBe(0);
    expect(Object.keys(created.json).sort()).toEqual(['companyId', 'publicToken', 'secretKey']);
    acme = created.json as Credentials;
    expect(acme.publicToken).toMatch(/^pk_/);
    expect(acme.secretKey).toMatch(/^sk_/);
    secretsSeen.push(acme.publicToken, acme.secretKey);

    const list = await cli(dataDir, 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ companyId: demo!.companyId, name: 'Demo Store' }),
        expect.objectContaining({ companyId: acme.companyId, name: 'Acme', logoUrl: 'https://acme.example/logo.png' }),
      ]),
    );
    expect(JSON.stringify(list.json)).not.toMatch(/pk_|sk_/);

    // The new token works at once; this also puts it in the server's token cache.
    const before = await createInvoice(server, acme.publicToken);
    expect(before.status, before.text).toBe(201);
    expect(before.body.status).toBe('created');

    const rotated = await cli(dataDir, 'rotate-token', '--company-id', acme.companyId);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toEqual({ companyId: acme.companyId, publicToken: expect.stringMatching(/^pk_/) });
    acmeToken = rotated.json.publicToken as string;
    expect(acmeToken).not.toBe(acme.publicToken);
    secretsSeen.push(acmeToken);

    // Rejected immediately although it was cached: only the server's admin route drops that cache, so this also
    // shows the CLI went through the admin API rather than opening the PGlite directory itself.
    const old = await createInvoice(server, acme.publicToken);
    expect(old.status, old.text).toBe(401);
    expect(old.body).toMatchObject({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
    const fresh = await createInvoice(server, acmeToken);
    expect(fresh.status, fresh.text).toBe(201);

    const secret = await cli(dataDir, 'rotate-secret', '--company-id', acme.companyId);
    expect(secret.code, secret.stderr).toBe(0);
    expect(secret.json).toEqual({ companyId: acme.companyId, secretKey: expect.stringMatching(/^sk_/) });
    expect(secret.json.secretKey).not.toBe(acme.secretKey);
    secretsSeen.push(secret.json.secretKey as string);
    // Rotating the secret leaves the public token alone.
    expect((await createInvoice(server, acmeToken)).status).toBe(201);
  });

  it('the merchant CLI rejects bad usage and unknown companies', async () => {
    for (const args of [['frob'], [], ['create'], ['create', '--logo-url', 'https://acme.example/x.png'], ['rotate-token'], ['rotate-secret']]) {
      const r = await cli(dataDir, ...args);
      expect(r.code, `merchant ${args.join(' ')}`).not.toBe(0);
      expect(r.code, `merchant ${args.join(' ')}`).not.toBeNull();
      expect(r.stderr, `merchant ${args.join(' ')}`).toContain('usage:');
      expect(r.stdout).toBe('');
    }
    expect((await cli(dataDir, 'frob')).stderr).toContain('unknown command frob');
    expect((await cli(dataDir, 'create')).stderr).toContain('--name is required');
    expect((await cli(dataDir, 'rotate-token')).stderr).toContain('--company-id is required');

    const missing = await cli(dataDir, 'rotate-token', '--company-id', randomUUID());
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: 'NOT_FOUND' } });

    // Nothing of that touched the server.
    expect(first!.proc.exit).toBeNull();
  });

  it('SIGTERM stops the server cleanly; data persists and the CLI then works on the PGlite directory', async () => {
    const exit = await stopServer(first!);
    expect(exit).toMatchObject({ code: 0, signal: null });
    // Idle, so nothing to drain: well under SHUTDOWN_TIMEOUT_MS (10 s), with slack for a loaded machine.
    expect(exit.ms).toBeLessThan(8_000);
    expect(fs.existsSync(path.join(dataDir, 'admin.json'))).toBe(false);
    // (No assertion on the "shutting down"/"stopped" log lines: pino's asynchronous stdout destination can
    // reorder or drop them at process.exit.)

    // No credential printed by anyone (demo banner aside) ever reached the server's logs.
    const { otherLines } = splitDemoBanner(first!.proc.stdout);
    for (const secret of secretsSeen) {
      for (const line of otherLines) expect(line).not.toContain(secret);
      expect(first!.proc.stderr).not.toContain(secret);
    }

    // With no server, the CLI opens the database itself.
    const list = await cli(dataDir, 'list');
    expect(list.code, list.stderr).toBe(0);
    expect((list.json as { name: string }[]).map((c) => c.name)).toEqual(['Demo Store', 'Acme']);
    const missing = await cli(dataDir, 'rotate-secret', '--company-id', randomUUID());
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: 'NOT_FOUND' } });

    // A second start on the same DATA_DIR keeps the merchants and creates no new demo one.
    const second = await startServer(dataDir);
    expect(splitDemoBanner(second.proc.stdout).banners).toBe(0);
    expect(second.proc.stdout).not.toContain('pk_');
    expect(second.proc.stdout).not.toContain('sk_');
    const res = await createInvoice(second, acmeToken!);
    expect(res.status, res.text).toBe(201);
    expect((await createInvoice(second, acme!.publicToken)).status).toBe(401);
    expect((await createInvoice(second, demo!.publicToken)).status).toBe(201);

    const again = await stopServer(second);
    expect(again).toMatchObject({ code: 0, signal: null });
    expect(fs.existsSync(path.join(dataDir, 'admin.json'))).toBe(false);
  });
});

describe('bad configuration', { timeout: 60_000 }, () => {
  const cases: { name: string; env: Record<string, string>; names: string[] }[] = [
    { name: 'PORT=notaport', env: { PORT: 'notaport' }, names: ['PORT'] },
    { name: 'DATABASE_URL=mysql://x', env: { DATABASE_URL: 'mysql://x' }, names: ['DATABASE_URL'] },
    { name: 'LOG_LEVEL=loud', env: { LOG_LEVEL: 'loud' }, names: ['LOG_LEVEL'] },
    { name: 'several bad variables at once', env: { PORT: '70000', DATABASE_URL: 'mysql://x' }, names: ['PORT', 'DATABASE_URL'] },
  ];
  for (const c of cases) {
    it(`${c.name}: exits 1 naming the variable, without starting`, async () => {
      const dataDir = tempDataDir();
      const port = await freePort();
      const proc = launch('src/main.ts', [], { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...c.env });
      const exit = await waitForExit(proc, 30_000);
      expect(exit.code, proc.stderr).toBe(1);
      for (const name of c.names) expect(proc.stderr).toMatch(new RegExp(`^\\s*${name}: `, 'm'));
      expect(proc.stdout).toBe('');
      // Nothing was created: no database, no admin state file.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    });
  }
});

interface HeldRequest {
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
function holdInvoiceRequest(server: Server, token: string): Promise<HeldRequest> {
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
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseJson(text), text }));
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
async function waitUntilRefusing(server: Server, timeoutMs = 30_000): Promise<void> {
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

describe('graceful shutdown', { timeout: 120_000 }, () => {
  it('an in-flight request still gets its answer after SIGTERM, and new connections are refused', async () => {
    // A long drain bound, so the server never cuts the request off however slow this machine is.
    const server = await startServer(tempDataDir(), { SHUTDOWN_TIMEOUT_MS: '60000' });
    const { demo } = splitDemoBanner(server.proc.stdout);
    expect(demo).not.toBeNull();

    const held = await holdInvoiceRequest(server, demo!.publicToken);
    server.proc.child.kill('SIGTERM');
    try {
      await waitUntilRefusing(server);
      expect(server.proc.exit, 'the server waits for the in-flight request').toBeNull();
    } finally {
      held.release();
    }

    const res = await held.response;
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('created');

    const exit = await waitForExit(server.proc);
    expect(exit).toMatchObject({ code: 0, signal: null });

    // The invoice created during the drain was committed before the database closed.
    const again = await startServer(server.dataDir);
    const fetched = await http('GET', `${again.url}/api/invoices/v1/regular/${encodeURIComponent(res.body.id as string)}`);
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.id).toBe(res.body.id);
    expect(await stopServer(again)).toMatchObject({ code: 0 });
  });

  // Regression: the state file must outlive the open database, or a CLI run during the drain opens the PGlite
  // directory beside the server and its write is lost when the server closes.
  it('a CLI run during the drain never reports a merchant that is then lost', async () => {
    const dataDir = tempDataDir();
    const server = await startServer(dataDir, { SHUTDOWN_TIMEOUT_MS: '60000' });
    const { demo } = splitDemoBanner(server.proc.stdout);
    const held = await holdInvoiceRequest(server, demo!.publicToken);
    server.proc.child.kill('SIGTERM');
    let created: CliResult;
    try {
      await waitUntilRefusing(server);
      created = await cli(dataDir, 'create', '--name', 'Ghost');
    } finally {
      held.release();
    }
    expect((await held.response).status).toBe(201);
    expect(await waitForExit(server.proc)).toMatchObject({ code: 0 });

    const list = await cli(dataDir, 'list');
    expect(list.code, list.stderr).toBe(0);
    const names = (list.json as { name: string }[]).map((c) => c.name);
    // Either the CLI refused (non-zero) or its merchant persisted.
    if (created.code === 0) expect(names).toContain('Ghost');
    else expect(names).not.toContain('Ghost');
  });
});
