// Black-box lifecycle tests: the real entry point (src/bin/server.ts) and the merchant CLI as child processes, on
// embedded PGlite in a temporary DATA_DIR and on PostgreSQL. Nothing here imports the server code.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyPgliteTemplate, DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { credentialsFrom, parseJson, startServerProcess, stopAllChildren, stopServer, tempDir, type Credentials, type ServerProcess } from '../support/processes.ts';
import { cli, cliViaTsx, createInvoice, environment, lastLine, logLines, someMerchant, splitDemoBanner, type LogLine } from '../support/server-env.ts';
import { whsec } from '../support/receiver.ts';

afterAll(() => stopAllChildren());

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
    // As `npm start` runs it (the other black-box tests start the run's own bundle of the same entry point).
    first = await startServerProcess(env, { npmStart: true });
    const { demo: printed, banners, otherLines } = splitDemoBanner(first.proc.stdout);
    if (kind === 'pglite') {
      expect(banners).toBe(1);
      demo = printed!;
      // Both modes' pairs; the "Try:" line uses the test-mode token.
      expect(Object.keys(demo.test).sort()).toEqual(['publicToken', 'secretKey', 'standardWebhooksSecret']);
      expect(demo.test.standardWebhooksSecret).toBe(whsec(demo.test.secretKey));
      expect(demo.live.standardWebhooksSecret).toBe(whsec(demo.live.secretKey));
      expect(demo.companyId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(demo.test.publicToken).toMatch(/^pk_test_\S+$/);
      expect(demo.test.secretKey).toMatch(/^sk_test_\S+$/);
      expect(demo.live.publicToken).toMatch(/^pk_live_\S+$/);
      expect(demo.live.secretKey).toMatch(/^sk_live_\S+$/);
      expect(first.proc.stdout).toContain(`Authorization: Bearer ${demo.test.publicToken}`);
    } else {
      expect(banners).toBe(0);
      demo = await someMerchant(first, env);
    }
    secretsSeen.push(demo.test.publicToken, demo.test.secretKey, demo.test.standardWebhooksSecret, demo.live.publicToken, demo.live.secretKey, demo.live.standardWebhooksSecret);
    const res = await createInvoice(first, demo.publicToken);
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('created');

    // Everything outside the banner is a pino JSON line; none carries the demo credentials.
    expect(otherLines.length).toBeGreaterThan(0);
    for (const line of otherLines) {
      const parsed = parseJson(line) as LogLine | undefined;
      expect(parsed, `not a JSON log line: ${line}`).toMatchObject({ level: expect.any(Number), msg: expect.any(String), time: expect.any(String) });
      for (const secret of [demo.test.publicToken, demo.test.secretKey, demo.live.publicToken, demo.live.secretKey]) expect(line).not.toContain(secret);
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
    const created = await cliViaTsx(env, 'create', '--name', 'Acme', '--logo-url', 'https://acme.example/logo.png');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe(`database: ${label()} (through the running server, pid ${server.proc.child.pid})\n`);
    expect(Object.keys(created.json).sort()).toEqual(['companyId', 'live', 'test']);
    acme = credentialsFrom(created.json);
    expect(acme.test).toEqual({ publicToken: expect.stringMatching(/^pk_test_/), secretKey: expect.stringMatching(/^sk_test_/), standardWebhooksSecret: whsec(acme.test.secretKey) });
    expect(acme.live).toEqual({ publicToken: expect.stringMatching(/^pk_live_/), secretKey: expect.stringMatching(/^sk_live_/), standardWebhooksSecret: whsec(acme.live.secretKey) });
    secretsSeen.push(acme.test.publicToken, acme.test.secretKey, acme.live.publicToken, acme.live.secretKey);

    const list = await cli(env, 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ companyId: demo!.companyId }),
        expect.objectContaining({ companyId: acme.companyId, name: 'Acme', logoUrl: 'https://acme.example/logo.png' }),
      ]),
    );
    expect(JSON.stringify(list.json)).not.toMatch(/pk_|sk_/);
    expect(list.json).toContainEqual(expect.objectContaining({ companyId: acme.companyId, modes: ['test', 'live'] }));

    // The new token works at once; this also puts it in the server's token cache.
    const before = await createInvoice(server, acme.publicToken);
    expect(before.status, before.text).toBe(201);

    expect((await cli(env, 'rotate-token', '--company-id', acme.companyId)).code, 'the mode is required').toBe(2);
    const rotated = await cli(env, 'rotate-token', '--company-id', acme.companyId, '--mode', 'test');
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toEqual({ companyId: acme.companyId, mode: 'test', publicToken: expect.stringMatching(/^pk_test_/) });
    acmeToken = rotated.json.publicToken as string;
    expect(acmeToken).not.toBe(acme.publicToken);
    secretsSeen.push(acmeToken);

    // Rejected immediately although it was cached: only the server's admin route drops that cache.
    const old = await createInvoice(server, acme.publicToken);
    expect(old.status, old.text).toBe(401);
    expect(old.body).toMatchObject({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
    expect((await createInvoice(server, acmeToken)).status).toBe(201);
    // The other mode's token is untouched by a rotation of this one.
    expect((await createInvoice(server, acme.live.publicToken)).status).toBe(201);

    const secret = await cli(env, 'rotate-secret', '--company-id', acme.companyId, '--mode', 'test');
    expect(secret.code, secret.stderr).toBe(0);
    expect(secret.json).toEqual({ companyId: acme.companyId, mode: 'test', secretKey: expect.stringMatching(/^sk_test_/), standardWebhooksSecret: expect.stringMatching(/^whsec_/) });
    expect(secret.json.standardWebhooksSecret).toBe(whsec(secret.json.secretKey as string));
    expect(secret.json.secretKey).not.toBe(acme.secretKey);
    secretsSeen.push(secret.json.secretKey as string);
    // Rotating the secret leaves the public token alone.
    expect((await createInvoice(server, acmeToken)).status).toBe(201);
  });

  it('the merchant CLI refuses unknown companies without touching the server', async () => {
    const missing = await cli(env, 'rotate-token', '--company-id', randomUUID(), '--mode', 'live');
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
    expect((await createInvoice(server, created.json.test.publicToken as string)).status).toBe(401);

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
      expect((await createInvoice(server, direct.json.test.publicToken as string)).status).toBe(201);
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
    const missing = await cli(env, 'rotate-secret', '--company-id', randomUUID(), '--mode', 'test');
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
