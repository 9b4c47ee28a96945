// Black-box lifecycle tests: the real entry point (src/main.ts) and the merchant CLI as child processes, on
// embedded PGlite in a temporary DATA_DIR and on PostgreSQL. Nothing here imports the server code.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyPgliteTemplate, DATABASES, freshDatabase, type DbKind, type TestDatabase } from '../support/databases.ts';
import {
  http,
  launch,
  parseJson,
  runCli,
  sleep,
  startServerProcess,
  stopAllChildren,
  stopServer,
  tempDir,
  waitForExit,
  type Credentials,
  type HttpResponse,
  type ServerProcess,
} from '../support/processes.ts';
import { startReceiver } from '../support/receiver.ts';

const SAMPLE_INVOICE = { invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }] };
const DEMO_BANNER = 'Created a demo merchant (shown once; keep these):';

afterAll(() => stopAllChildren());

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

const createInvoice = (server: ServerProcess, token: string) => server.request('POST', '/api/invoices/v1/regular', { token, json: SAMPLE_INVOICE });

/** The merchant CLI; its last stderr line is the JSON error when it fails, the first says which database it used. */
const cli = (env: Record<string, string>, ...args: string[]) => runCli('src/cli/merchant.ts', args, env);
const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

/**
 * Per database: the environment of a server and its CLI (one DATA_DIR each; PostgreSQL gets a fresh database).
 * `bare`: an empty DATA_DIR, as on a first start; otherwise the embedded database is there, migrated, empty.
 */
async function environment(kind: DbKind, databases: TestDatabase[], bare = false): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: tempDir('payrail-lifecycle-') };
  if (kind === 'pglite' && !bare) copyPgliteTemplate(path.join(env['DATA_DIR']!, 'pglite'));
  if (kind === 'postgres') {
    const db = await freshDatabase('postgres');
    databases.push(db);
    env['DATABASE_URL'] = db.url;
  }
  return env;
}

/** A merchant to call the API with: the printed demo merchant on PGlite, one made with the CLI on PostgreSQL. */
async function someMerchant(server: ServerProcess, env: Record<string, string>): Promise<Credentials> {
  if (server.demo) return server.demo;
  const created = await cli(env, 'create', '--name', 'Shop');
  expect(created.code, created.stderr).toBe(0);
  return created.json as Credentials;
}

describe.each(DATABASES)('server lifecycle on %s', { timeout: 120_000 }, (kind) => {
  // The cases build on each other: one environment, the first server, the CLI against it, a restart.
  const databases: TestDatabase[] = [];
  let env: Record<string, string>;
  let first: ServerProcess | undefined;
  let demo: Credentials | undefined;
  let acme: Credentials | undefined;
  /** Acme's token after rotation. */
  let acmeToken: string | undefined;
  const secretsSeen: string[] = [];
  const stateFile = () => path.join(env['DATA_DIR']!, 'admin.json');
  const label = () => (kind === 'pglite' ? `pglite:${path.join(env['DATA_DIR']!, 'pglite')}` : env['DATABASE_URL']!);

  afterAll(() => Promise.all(databases.map((d) => d.drop())));

  it('first start: a demo merchant on the embedded database (printed once), none on PostgreSQL; JSON logs without credentials', async () => {
    env = await environment(kind, databases, true);
    first = await startServerProcess(env);
    const { demo: printed, banners, otherLines } = splitDemoBanner(first.proc.stdout);
    if (kind === 'pglite') {
      expect(banners).toBe(1);
      demo = printed!;
      expect(Object.keys(demo).sort()).toEqual(['companyId', 'publicToken', 'secretKey']);
      expect(demo.companyId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(demo.publicToken).toMatch(/^pk_\S+$/);
      expect(demo.secretKey).toMatch(/^sk_\S+$/);
    } else {
      expect(banners).toBe(0);
      demo = await someMerchant(first, env);
    }
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
    expect(logLines(first.proc.stdout).find((l) => l.msg === 'payrail listening')).toMatchObject({ database: kind });

    // The admin state file is there for the CLI while the server runs, naming the database it serves.
    const state = JSON.parse(fs.readFileSync(stateFile(), 'utf8')) as { pid: number; url: string; token: string; database: string };
    expect(state.pid).toBe(first.proc.child.pid);
    expect(state.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(state.database).toBe(label());
    expect(fs.statSync(stateFile()).mode & 0o077).toBe(0);
    secretsSeen.push(state.token);
  });

  it('the merchant CLI manages merchants through the running server, and says so', async () => {
    const server = first!;
    const created = await cli(env, 'create', '--name', 'Acme', '--logo-url', 'https://acme.example/logo.png');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe(`database: ${label()} (through the running server, pid ${server.proc.child.pid})\n`);
    expect(Object.keys(created.json).sort()).toEqual(['companyId', 'publicToken', 'secretKey']);
    acme = created.json as Credentials;
    expect(acme.publicToken).toMatch(/^pk_/);
    expect(acme.secretKey).toMatch(/^sk_/);
    secretsSeen.push(acme.publicToken, acme.secretKey);

    const list = await cli(env, 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ companyId: demo!.companyId }),
        expect.objectContaining({ companyId: acme.companyId, name: 'Acme', logoUrl: 'https://acme.example/logo.png' }),
      ]),
    );
    expect(JSON.stringify(list.json)).not.toMatch(/pk_|sk_/);

    // The new token works at once; this also puts it in the server's token cache.
    const before = await createInvoice(server, acme.publicToken);
    expect(before.status, before.text).toBe(201);

    const rotated = await cli(env, 'rotate-token', '--company-id', acme.companyId);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toEqual({ companyId: acme.companyId, publicToken: expect.stringMatching(/^pk_/) });
    acmeToken = rotated.json.publicToken as string;
    expect(acmeToken).not.toBe(acme.publicToken);
    secretsSeen.push(acmeToken);

    // Rejected immediately although it was cached: only the server's admin route drops that cache.
    const old = await createInvoice(server, acme.publicToken);
    expect(old.status, old.text).toBe(401);
    expect(old.body).toMatchObject({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
    expect((await createInvoice(server, acmeToken)).status).toBe(201);

    const secret = await cli(env, 'rotate-secret', '--company-id', acme.companyId);
    expect(secret.code, secret.stderr).toBe(0);
    expect(secret.json).toEqual({ companyId: acme.companyId, secretKey: expect.stringMatching(/^sk_/) });
    expect(secret.json.secretKey).not.toBe(acme.secretKey);
    secretsSeen.push(secret.json.secretKey as string);
    // Rotating the secret leaves the public token alone.
    expect((await createInvoice(server, acmeToken)).status).toBe(201);
  });

  it('the merchant CLI refuses unknown companies without touching the server', async () => {
    const missing = await cli(env, 'rotate-token', '--company-id', randomUUID());
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(lastLine(missing.stderr))).toMatchObject({ error: { code: 'NOT_FOUND' } });

    // Nothing of that touched the server.
    expect(first!.proc.exit).toBeNull();
  });

  it('a CLI on another database never writes into the server’s: it opens its own and names both', async () => {
    const server = first!;
    const other = kind === 'pglite' ? `pglite:${copyPgliteTemplate(path.join(tempDir('payrail-other-'), 'pglite'))}` : (databases.push(await freshDatabase('postgres')), databases.at(-1)!.url);
    const elsewhere = { ...env, DATABASE_URL: other };
    const created = await cli(elsewhere, 'create', '--name', 'Elsewhere');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe(`database: ${other} (opened directly; the server in this DATA_DIR, pid ${server.proc.child.pid}, serves ${label()})\n`);
    // The merchant is in the other database only.
    expect((await cli(env, 'list')).json.map((c: { name: string }) => c.name)).not.toContain('Elsewhere');
    expect((await cli(elsewhere, 'list')).json.map((c: { name: string }) => c.name)).toEqual(['Elsewhere']);
    expect((await createInvoice(server, created.json.publicToken as string)).status).toBe(401);

    const fromAnotherDataDir = { DATA_DIR: tempDir('payrail-cli-'), ...(kind === 'postgres' ? { DATABASE_URL: env['DATABASE_URL']! } : { DATABASE_URL: label() }) };
    const direct = await cli(fromAnotherDataDir, 'create', '--name', 'Direct');
    if (kind === 'pglite') {
      // The server's embedded database, from a CLI that does not know the server: refused, nothing written.
      expect(direct.code).toBe(1);
      expect(direct.stderr).toMatch(new RegExp(`is in use by process ${server.proc.child.pid} \\(server`));
    } else {
      // PostgreSQL takes many clients: the CLI writes directly, and the server sees the merchant at once.
      expect(direct.code, direct.stderr).toBe(0);
      expect(direct.stderr).toBe(`database: ${label()} (opened directly)\n`);
      expect((await createInvoice(server, direct.json.publicToken as string)).status).toBe(201);
    }
  });

  it('SIGTERM stops the server cleanly; data persists and the CLI then opens the database itself', async () => {
    const exit = await stopServer(first!);
    expect(exit).toMatchObject({ code: 0, signal: null });
    // Idle, so nothing to drain: well under SHUTDOWN_TIMEOUT_MS (10 s), with slack for a loaded machine.
    expect(exit.ms).toBeLessThan(8_000);
    expect(fs.existsSync(stateFile())).toBe(false);

    // No credential printed by anyone (demo banner aside) ever reached the server's logs.
    const { otherLines } = splitDemoBanner(first!.proc.stdout);
    for (const secret of secretsSeen) {
      for (const line of otherLines) expect(line).not.toContain(secret);
      expect(first!.proc.stderr).not.toContain(secret);
    }

    const list = await cli(env, 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe(`database: ${label()} (opened directly)\n`);
    expect((list.json as { companyId: string }[]).map((c) => c.companyId)).toEqual(expect.arrayContaining([demo!.companyId, acme!.companyId]));
    const missing = await cli(env, 'rotate-secret', '--company-id', randomUUID());
    expect(missing.code).toBe(1);
    expect(JSON.parse(lastLine(missing.stderr))).toMatchObject({ error: { code: 'NOT_FOUND' } });

    // A second start keeps the merchants and creates no new demo one.
    const second = await startServerProcess(env);
    expect(splitDemoBanner(second.proc.stdout).banners).toBe(0);
    expect(second.proc.stdout).not.toContain('pk_');
    expect(second.proc.stdout).not.toContain('sk_');
    expect((await createInvoice(second, acmeToken!)).status).toBe(201);
    expect((await createInvoice(second, acme!.publicToken)).status).toBe(401);
    expect((await createInvoice(second, demo!.publicToken)).status).toBe(201);
    expect(await stopServer(second)).toMatchObject({ code: 0, signal: null });
    expect(fs.existsSync(stateFile())).toBe(false);
  });
});

describe('merchant CLI usage', { timeout: 60_000 }, () => {
  it('rejects bad usage with the usage text, before opening any database', async () => {
    const env = { DATA_DIR: tempDir('payrail-usage-') };
    const cases: [string[], string][] = [
      [['frob'], 'unknown command frob'],
      [[], 'usage:'],
      [['create'], '--name is required'],
      [['create', '--logo-url', 'https://acme.example/x.png'], '--name is required'],
      [['rotate-token'], '--company-id is required'],
      [['rotate-secret'], '--company-id is required'],
      [['list', '--bogus'], "Unknown option '--bogus'"],
    ];
    for (const [args, message] of cases) {
      const r = await cli(env, ...args);
      expect(r.code, `merchant ${args.join(' ')}`).toBe(2);
      expect(r.stderr, `merchant ${args.join(' ')}`).toContain('usage:');
      expect(r.stderr, `merchant ${args.join(' ')}`).toContain(message);
      expect(r.stdout).toBe('');
    }
    expect(fs.readdirSync(env.DATA_DIR)).toEqual([]);
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
      const dataDir = tempDir('payrail-badconfig-');
      const proc = launch('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...c.env });
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
function holdInvoiceRequest(server: ServerProcess, token: string): Promise<HeldRequest> {
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
async function waitUntilRefusing(server: ServerProcess, timeoutMs = 30_000): Promise<void> {
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

describe.each(DATABASES)('graceful shutdown on %s', { timeout: 120_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));

  it('an in-flight request still gets its answer after SIGTERM, and new connections are refused', async () => {
    // A long drain bound, so the server never cuts the request off however slow this machine is.
    const env = { ...(await environment(kind, databases)), SHUTDOWN_TIMEOUT_MS: '60000' };
    const server = await startServerProcess(env);
    const merchant = await someMerchant(server, env);

    const held = await holdInvoiceRequest(server, merchant.publicToken);
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
    expect(await waitForExit(server.proc)).toMatchObject({ code: 0, signal: null });

    // The invoice created during the drain was committed before the database closed.
    const again = await startServerProcess(env);
    const fetched = await again.request('GET', `/api/invoices/v1/regular/${encodeURIComponent(res.body.id as string)}`);
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.id).toBe(res.body.id);
    expect(await stopServer(again)).toMatchObject({ code: 0 });
  });

  // Regression: the state file must outlive the open database, or a CLI run during the drain opens the PGlite
  // directory beside the server and its write is lost when the server closes.
  it('a CLI run during the drain never reports a merchant that is then lost', async () => {
    const env = { ...(await environment(kind, databases)), SHUTDOWN_TIMEOUT_MS: '60000' };
    const server = await startServerProcess(env);
    const merchant = await someMerchant(server, env);
    const held = await holdInvoiceRequest(server, merchant.publicToken);
    server.proc.child.kill('SIGTERM');
    let created: Awaited<ReturnType<typeof cli>>;
    try {
      await waitUntilRefusing(server);
      created = await cli(env, 'create', '--name', 'Ghost');
    } finally {
      held.release();
    }
    expect((await held.response).status).toBe(201);
    expect(await waitForExit(server.proc)).toMatchObject({ code: 0 });

    const list = await cli(env, 'list');
    expect(list.code, list.stderr).toBe(0);
    const names = (list.json as { name: string }[]).map((c) => c.name);
    // Either the CLI refused (non-zero) or its merchant persisted.
    if (created.code === 0) expect(names).toContain('Ghost');
    else expect(names).not.toContain('Ghost');
  });

  it('past SHUTDOWN_TIMEOUT_MS the process exits even while work hangs, and the database opens again', async () => {
    // A webhook receiver that never answers, and a send timeout far beyond the shutdown deadline: stopping the
    // delivery worker would wait a minute.
    const env = { ...(await environment(kind, databases)), SHUTDOWN_TIMEOUT_MS: '1500', WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_ALLOW_PRIVATE: '1' };
    const server = await startServerProcess(env);
    const merchant = await someMerchant(server, env);
    const receiver = await startReceiver(() => merchant.secretKey);
    receiver.behaviour = 'hang';
    try {
      await server.request('PUT', '/api/company/settings/webhook-url', { token: merchant.publicToken, json: { webHookUrl: receiver.url } });
      const created = await createInvoice(server, merchant.publicToken);
      await receiver.waitFor((r) => r.length >= 1);
      server.proc.child.kill('SIGTERM');
      const exit = await waitForExit(server.proc, 15_000);
      expect(exit).toMatchObject({ code: 1, signal: null });
      expect(exit.ms).toBeGreaterThanOrEqual(1_400);
      expect(exit.ms).toBeLessThan(6_000);
      expect(logLines(server.proc.stdout).map((l) => l.msg)).toContain('payrail did not stop within SHUTDOWN_TIMEOUT_MS; exiting now');

      const again = await startServerProcess({ ...env, WEBHOOK_TIMEOUT_MS: '1000' });
      expect((await again.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).status).toBe(200);
      expect(await stopServer(again)).toMatchObject({ code: 0 });
    } finally {
      await receiver.close();
    }
  });
});
