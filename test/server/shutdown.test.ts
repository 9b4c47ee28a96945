// Shutdown of the real server process (src/bin/server.ts) on both databases: in-flight requests are answered, nothing
// acknowledged is lost, and past SHUTDOWN_TIMEOUT_MS the process exits whatever hangs.
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { startServerProcess, stopAllChildren, stopServer, waitForExit } from '../support/processes.ts';
import { startReceiver } from '../support/receiver.ts';
import { cli, createInvoice, environment, holdInvoiceRequest, logLines, someMerchant, waitUntilRefusing } from '../support/server-env.ts';

afterAll(() => stopAllChildren());

describe.each(DATABASES)('graceful shutdown on %s', { timeout: 120_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));

  // Regression, too: the admin state file must outlive the open database, or a CLI run during the drain opens the
  // PGlite directory beside the server and its write is lost when the server closes.
  it('during the drain an in-flight request is answered, new connections are refused, and a CLI write is never lost', async () => {
    // A long drain bound, so the server never cuts the request off however slow this machine is.
    const env = { ...(await environment(kind, databases)), SHUTDOWN_TIMEOUT_MS: '60000' };
    const server = await startServerProcess(env);
    const merchant = await someMerchant(server, env);

    const held = await holdInvoiceRequest(server, merchant.publicToken);
    server.proc.child.kill('SIGTERM');
    let created: Awaited<ReturnType<typeof cli>>;
    try {
      await waitUntilRefusing(server);
      expect(server.proc.exit, 'the server waits for the in-flight request').toBeNull();
      created = await cli(env, 'create', '--name', 'Ghost');
    } finally {
      held.release();
    }
    const res = await held.response;
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('created');
    expect(await waitForExit(server.proc)).toMatchObject({ code: 0, signal: null });

    // The invoice created during the drain was committed before the database closed; the CLI either refused
    // (non-zero) or its merchant persisted.
    const again = await startServerProcess(env);
    const fetched = await again.request('GET', `/api/invoices/v1/regular/${encodeURIComponent(res.body.id as string)}`);
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.id).toBe(res.body.id);
    const names = ((await cli(env, 'list')).json as { name: string }[]).map((c) => c.name);
    if (created.code === 0) expect(names).toContain('Ghost');
    else expect(names).not.toContain('Ghost');
    expect(await stopServer(again)).toMatchObject({ code: 0 });
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
