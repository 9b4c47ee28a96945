// Black-box helpers: the real server (src/bin/server.ts) and the operator CLIs as child processes, and plain HTTP
// against them. Every wait is bounded; `stopAllChildren()` (afterAll) kills whatever is still running.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.ts';
import { checkApiExchange } from './contract.ts';
import { freePort } from './net.ts';

export { freePort };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 20_000;
const DEMO_BANNER = 'Created a demo merchant (shown once; keep these):';

// Every variable src/config.ts reads: children get exactly what a test sets, whatever the caller's shell has.
export const CONFIG_VARS = CONFIG_VARIABLES;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Proc {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once the process has exited and its output is read (never rejects). */
  exited: Promise<Exit>;
  exit: Exit | null;
  /** Resolves when `predicate(stdout)` holds; rejects on timeout or if the process exits first. */
  waitForStdout(predicate: (stdout: string) => boolean, what: string, timeoutMs?: number): Promise<void>;
}

const children = new Set<Proc>();
const tempDirs: string[] = [];
// Should the test process end without its afterAll (a crash, a timeout kill), take the children with it.
process.once('exit', () => {
  for (const proc of children) proc.child.kill('SIGKILL');
});

export function tempDir(prefix = 'payrail-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARS) delete env[name];
  return { ...env, ...vars };
}

export interface LaunchOptions {
  /** `node --import tsx <script>`, as the npm scripts of the CLIs run it. */
  viaTsx?: boolean;
  /** The `start` script's own command from package.json (src/bin/server.ts only). */
  npmStart?: boolean;
}

/** `npm start` without npm: the arguments package.json's start script gives node. */
function npmStartArgs(): string[] {
  const script = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;
  const [bin, ...args] = script.split(/\s+/);
  if (bin !== 'node') throw new Error(`the start script does not run node: ${script}`);
  return args;
}

/**
 * Runs an entry point (`src/bin/server.ts`, ...) in the project root: from the run's prebuilt bundle of it
 * (test/global-setup.ts), under tsx, or (`npmStart`) exactly as `npm start` does.
 */
export function launch(script: string, args: string[], env: Record<string, string>, options: LaunchOptions = {}): Proc {
  if (options.npmStart && script !== 'src/bin/server.ts') throw new Error(`npm start runs src/bin/server.ts, not ${script}`);
  const bundle = options.viaTsx || options.npmStart ? undefined : inject('childBundles')[script];
  const argv = options.npmStart ? [...npmStartArgs(), ...args] : bundle ? [bundle, ...args] : ['--import', 'tsx', script, ...args];
  const child = spawn(process.execPath, argv, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
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
        const describe = () => `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
        const check = () => {
          if (predicate(stdout)) return done();
          if (proc.exit) return done(new Error(`process exited (${JSON.stringify(proc.exit)}) before ${what}${describe()}`));
        };
        const timer = setTimeout(() => done(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describe()}`)), timeoutMs);
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

/** Waits for the exit (and says how long it took); past `timeoutMs` kills the process with SIGKILL and throws. */
export async function waitForExit(proc: Proc, timeoutMs = EXIT_TIMEOUT_MS): Promise<Exit & { ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const result = await Promise.race([proc.exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
    throw new Error(`process did not exit within ${timeoutMs} ms\nstdout:\n${proc.stdout}\nstderr:\n${proc.stderr}`);
  }
  return { ...result, ms: Date.now() - started };
}

/** Kills every child still running (afterAll) and removes the temporary directories. */
export async function stopAllChildren(): Promise<void> {
  const running = [...children];
  for (const proc of running) proc.child.kill('SIGKILL');
  await Promise.all(running.map((p) => Promise.race([p.exited, sleep(10_000)])));
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  // Tests read whatever shape the endpoint returns.
  body: any;
  text: string;
}

export function parseJson(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** One request on its own connection (no keep-alive socket survives a server kill); /api/ answers are checked against the OpenAPI document. */
export function http(method: string, url: string, options: { token?: string; json?: unknown; timeoutMs?: number } = {}): Promise<HttpResponse> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string | number> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false, timeout: options.timeoutMs ?? 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', reject);
      res.on('end', () => {
        try {
          checkApiExchange({ method, path: url, status: res.statusCode ?? 0, contentType: res.headers['content-type'], text });
        } catch (e) {
          return reject(e);
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseJson(text), text });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

interface ModeCredentials {
  publicToken: string;
  secretKey: string;
  standardWebhooksSecret: string;
}

/** A merchant account as the CLI and the demo banner print it, with test mode's credentials also at the top. */
export interface Credentials extends ModeCredentials {
  companyId: string;
  test: ModeCredentials;
  live: ModeCredentials;
}

/** The CLI's or the demo banner's JSON: `{companyId, test: {...}, live: {...}}`. */
export function credentialsFrom(printed: unknown): Credentials {
  const account = printed as Omit<Credentials, keyof ModeCredentials>;
  return { ...account, ...account.test };
}

export interface ServerProcess {
  proc: Proc;
  url: string;
  /** The demo merchant printed on a first start on an embedded database, else null. */
  demo: Credentials | null;
  request(method: string, path: string, options?: { token?: string; json?: unknown }): Promise<HttpResponse>;
}

const listening = (stdout: string) =>
  stdout.split('\n').some((line) => (parseJson(line) as { msg?: unknown } | undefined)?.msg === 'payrail listening');

function demoFrom(stdout: string): Credentials | null {
  const lines = stdout.split('\n');
  const start = lines.indexOf(DEMO_BANNER);
  if (start < 0) return null;
  const end = lines.indexOf('}', start);
  return end < 0 ? null : credentialsFrom(JSON.parse(lines.slice(start + 1, end + 1).join('\n')));
}

/**
 * Starts src/bin/server.ts with `env` (DATA_DIR, DATABASE_URL, ...) on a free port; resolves once /health answers
 * and "payrail listening" is logged (the demo banner, if any, is out by then).
 */
export async function startServerProcess(env: Record<string, string>, options: LaunchOptions = {}): Promise<ServerProcess> {
  // A PORT in `env` is kept (a restart on the same address); otherwise a free one.
  const port = env['PORT'] ? Number(env['PORT']) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = launch('src/bin/server.ts', [], { HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env, PORT: String(port) }, options);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  const describe = () => `\nstdout:\n${proc.stdout}\nstderr:\n${proc.stderr}`;
  for (let healthy = false; ; ) {
    if (proc.exit) throw new Error(`server exited during start-up (${JSON.stringify(proc.exit)})${describe()}`);
    if (Date.now() > deadline) {
      proc.child.kill('SIGKILL');
      throw new Error(`server not ready after ${STARTUP_TIMEOUT_MS} ms${describe()}`);
    }
    if (!healthy) healthy = (await http('GET', `${url}/health`, { timeoutMs: 2_000 }).catch(() => null))?.status === 200;
    if (healthy && listening(proc.stdout)) break;
    await sleep(100);
  }
  return {
    proc,
    url,
    demo: demoFrom(proc.stdout),
    request: (method, p, options = {}) => http(method, `${url}${p}`, options),
  };
}

/** kill -9: no shutdown hook runs (the admin state file stays behind, the database is not closed). */
export async function killServer(server: ServerProcess): Promise<Exit> {
  server.proc.child.kill('SIGKILL');
  const { code, signal } = await waitForExit(server.proc);
  return { code, signal };
}

/** SIGTERM: the graceful shutdown. */
export async function stopServer(server: ServerProcess): Promise<Exit & { ms: number }> {
  server.proc.child.kill('SIGTERM');
  return waitForExit(server.proc, 30_000);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs an operator CLI (e.g. src/bin/ledger-verify.ts) to completion. */
export async function runCli(script: string, args: string[], env: Record<string, string>, options: { viaTsx?: boolean } = {}): Promise<CliResult> {
  const proc = launch(script, args, env, options);
  const { code } = await waitForExit(proc, 60_000);
  return { code, stdout: proc.stdout, stderr: proc.stderr, json: parseJson(proc.stdout) };
}
