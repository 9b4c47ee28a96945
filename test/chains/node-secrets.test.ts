// Node secrets never leave the process. The real server (src/bin/server.ts, a child process) and the chains worker get a
// CHAINS_FILE whose nodes carry keys in their path and query, user:password and header values, and fail each in its own
// way: a closed port, fetch's "bad port", a node that answers 500 echoing the request (URL, headers, body), one that
// answers garbage quoting the URL, one that never answers, one that refuses the credentials. Their log output (stdout
// JSON lines, stderr), /health, /health/ready (public and the admin listener's details) and /metrics name each node by
// its display name (its label, else scheme://host:port) and carry none of the secrets. A node that is not optional and
// fails at start stops it with a message that names it the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { startBadNode, type BadNode } from '../support/bad-node.ts';
import { FAKE_USDT_CONTRACT, startFakeChains, type FakeChains } from '../support/fake-chains/index.ts';
import { eventually } from '../support/funding.ts';
import { freePort, http, launch, startServerProcess, stopAllChildren, stopServer, waitForExit, type Proc } from '../support/processes.ts';
import { environment, logLines } from '../support/server-env.ts';

const SECRET = {
  ethPath: 'ethPathKey7f3a9c2e',
  ethQuery: 'ethQueryKey51b0d8e4',
  ethHeader: 'ethHeaderKey0c6e2f91',
  bscPath: 'bscPathKey93d1a7b6',
  bscHeader: 'bscHeaderKeyd2f40a8c',
  btcUser: 'btcUserName4e1f',
  btcPassword: 'btcPassword8a2c7d',
  btcQuery: 'btcQueryKey6b3e9f01',
  ltcUser: 'ltcUserName2d9a',
  ltcPassword: 'ltcPassword5f1b3e',
  ltcPath: 'ltcPathKey0e7c4b2a',
  ltcHeader: 'ltcHeaderKey3a8f6d1c',
  tonUser: 'tonUserName7c3e',
  tonPassword: 'tonPassword1d6a9b',
  tonQuery: 'tonQueryKey4f2e8c07',
  tonApiKey: 'tonApiKey9b1d3e5f',
  solPath: 'SECRETPATHKEY',
  solQuery: 'SECRETQUERYKEY',
  solHeader: 'solHeaderKey8e2b6c4a',
  tronPath: 'tronPathKey2b7e9d13',
  tronQuery: 'tronQueryKey6c0a4f82',
  tronApiKey: 'tronApiKey5e3b1c97',
  tronHeader: 'tronHeaderKey1f8d2a6e',
};
const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
const ALL_SECRETS = [
  ...Object.values(SECRET),
  basic(SECRET.btcUser, SECRET.btcPassword),
  basic(SECRET.ltcUser, SECRET.ltcPassword),
  basic(SECRET.tonUser, SECRET.tonPassword),
];
const METRICS_TOKEN = 'scrape-token-0123456789abcdefghij';
const ADMIN_TOKEN = 'operator-token-0123456789abcdefghij';
const NODE_NETWORKS = ['bitcoin', 'litecoin', 'ethereum', 'bsc', 'tron', 'solana', 'ton'];

/** Every secret found in `text`, whole or cut (its first 10 characters: a quote of an answer may end inside one). */
const secretsIn = (text: string) => ALL_SECRETS.filter((s) => text.includes(s.slice(0, 10)));

describe('secrets of chain nodes in their configuration', { timeout: 180_000 }, () => {
  let fake: FakeChains;
  let echo: BadNode;
  let garbage: BadNode;
  let hang: BadNode;
  let unauthorized: BadNode;
  let tronNode: BadNode;
  let closedPort: number;
  let chains: Record<string, string>;
  /** The display name each network's node should be shown by, and what its failure says. */
  let expected: Record<string, { node: string; detail: RegExp }>;
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    fake = await startFakeChains();
    [echo, garbage, hang, unauthorized] = await Promise.all([startBadNode('echo500'), startBadNode('garbage'), startBadNode('hang'), startBadNode('unauthorized')]);
    // Tron works through its node at start (it is not optional) and fails afterwards (echo500).
    tronNode = await startBadNode({ proxyTo: `${fake.url}/tron`, strip: `/${SECRET.tronPath}` });
    closedPort = await freePort();
    const origin = (node: BadNode) => node.url;
    chains = chainsEnv({
      ethereum: {
        rpcUrl: `http://127.0.0.1:${closedPort}/v3/${SECRET.ethPath}?apiKey=${SECRET.ethQuery}`,
        headers: { 'x-api-key': SECRET.ethHeader },
        chainId: 1,
        xpub: testXpub('ethereum', false),
        optional: true,
        pollMs: 200,
      },
      bsc: {
        rpcUrl: `${hang.url}/bsc/${SECRET.bscPath}`,
        headers: { authorization: `Bearer ${SECRET.bscHeader}` },
        label: 'bsc-archive',
        timeoutMs: 300,
        chainId: 56,
        xpub: testXpub('bsc', false),
        optional: true,
        pollMs: 200,
      },
      bitcoin: {
        rpcUrl: `http://${SECRET.btcUser}:${SECRET.btcPassword}@${unauthorized.url.slice(7)}/?token=${SECRET.btcQuery}`,
        xpub: testXpub('bitcoin', false),
        optional: true,
        pollMs: 200,
      },
      litecoin: {
        rpcUrl: `http://${SECRET.ltcUser}:${SECRET.ltcPassword}@${echo.url.slice(7)}/${SECRET.ltcPath}`,
        headers: { 'x-ltc-key': SECRET.ltcHeader },
        xpub: testXpub('litecoin', true),
        chain: 'regtest',
        optional: true,
        pollMs: 200,
      },
      ton: {
        apiUrl: `http://${SECRET.tonUser}:${SECRET.tonPassword}@${garbage.url.slice(7)}/api/v2?api_key=${SECRET.tonQuery}`,
        apiKey: SECRET.tonApiKey,
        address: fake.ton.wallet,
        optional: true,
        pollMs: 200,
      },
      solana: {
        // The review's example: fetch refuses port 9 ("bad port").
        rpcUrl: `http://127.0.0.1:9/rpc/${SECRET.solPath}?api-key=${SECRET.solQuery}`,
        headers: { 'x-api-key': SECRET.solHeader },
        address: fake.solana.wallet,
        optional: true,
        pollMs: 200,
      },
      tron: {
        apiUrl: `${tronNode.url}/${SECRET.tronPath}?token=${SECRET.tronQuery}`,
        apiKey: SECRET.tronApiKey,
        headers: { 'x-tron-extra': SECRET.tronHeader },
        label: 'trongrid-main',
        xpub: testXpub('tron', false),
        usdtContract: FAKE_USDT_CONTRACT,
        confirmations: 3,
        pollMs: 200,
      },
    });
    expected = {
      ethereum: { node: `http://127.0.0.1:${closedPort}`, detail: /ECONNREFUSED/ },
      bsc: { node: 'bsc-archive', detail: /no answer in time/ },
      bitcoin: { node: origin(unauthorized), detail: /refused our credentials \(HTTP 401\)/ },
      litecoin: { node: origin(echo), detail: /answered HTTP 500 cannot serve/ },
      ton: { node: origin(garbage), detail: /answered something that is not JSON/ },
      solana: { node: 'http://127.0.0.1:9', detail: /bad port/ },
      tron: { node: 'trongrid-main', detail: /answered 500: cannot serve/ },
    };
  });
  afterAll(async () => {
    await stopAllChildren();
    await Promise.all([fake, echo, garbage, hang, unauthorized, tronNode].map((s) => s?.close()));
    for (const db of databases) await db.drop();
  });

  /** Waits until `proc` has logged a failed scan of every node's network (their watchers ran into each failure). */
  const watchersFailed = (proc: Proc) =>
    proc.waitForStdout((out) => {
      const failed = new Set(logLines(out).filter((l) => l.msg === 'chain watcher failed; retrying').map((l) => l['network']));
      return NODE_NETWORKS.every((n) => failed.has(n));
    }, 'a failed scan of every node logged');

  /** The log lines name each node by its display name. */
  const expectNodesNamed = (stdout: string) => {
    const lines = logLines(stdout);
    for (const network of NODE_NETWORKS) {
      expect(lines.some((l) => l.msg === 'chain watcher failed; retrying' && l['network'] === network && l['node'] === expected[network]!.node), network).toBe(true);
    }
  };

  describe.each(DATABASES)('the server on %s', (kind) => {
    it('shows and logs every failing node by its display name, and no secret in /health, /health/ready, /metrics or the log', async () => {
      tronNode.mode = { proxyTo: `${fake.url}/tron`, strip: `/${SECRET.tronPath}` };
      const env = { ...(await environment(kind, databases)), ...chains, LOG_LEVEL: 'debug', METRICS_TOKEN, ADMIN_TOKEN };
      const server = await startServerProcess(env);
      // The secrets do reach the node: its requests carry the path, query and headers that authenticate them.
      expect(tronNode.requests).toBeGreaterThan(0);
      tronNode.mode = 'echo500';

      const health = await eventually(
        () => server.request('GET', '/health'),
        (r) => NODE_NETWORKS.every((n) => r.body.chains.find((c: { network: string }) => c.network === n)?.detail?.match(expected[n]!.detail)),
        30_000,
      );
      await watchersFailed(server.proc);
      expect(health.body.status).toBe('degraded');
      for (const network of NODE_NETWORKS) {
        expect(health.body.chains.find((c: { network: string }) => c.network === network)).toEqual({
          network,
          live: 'node',
          test: 'sandbox',
          node: expected[network]!.node,
          state: 'failing',
          detail: expect.stringMatching(expected[network]!.detail),
        });
      }

      const ready = await server.request('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.chains).toBe('failing');
      const admin = logLines(server.proc.stdout).find((l) => l.msg === 'payrail listening')!['admin'] as string;
      const detailed = await http('GET', `${admin}/health/ready`, { token: ADMIN_TOKEN });
      expect(detailed.body.details.chains).toMatch(/^tron failing at trongrid-main \(POST \/wallet\/\w+ at trongrid-main answered 500: cannot serve POST \[redacted\]\/wallet\/\w+\?\[redacted\] /);
      const metrics = await http('GET', `${server.url}/metrics`, { token: METRICS_TOKEN });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('payrail_job_running{job="chain-watcher:tron"}');
      const adminMetrics = await http('GET', `${admin}/metrics`, { token: ADMIN_TOKEN });
      expect(adminMetrics.status).toBe(200);

      await stopServer(server);
      expectNodesNamed(server.proc.stdout);
      const seen = { health: health.text, ready: ready.text, detailed: detailed.text, metrics: metrics.text, adminMetrics: adminMetrics.text, stdout: server.proc.stdout, stderr: server.proc.stderr };
      for (const [where, text] of Object.entries(seen)) expect(secretsIn(text), where).toEqual([]);
    });

    it('a node that is not optional and fails at start stops it, named by its display name, without its secrets', async () => {
      tronNode.mode = 'echo500';
      const env = { ...(await environment(kind, databases)), ...chains, LOG_LEVEL: 'debug', HOST: '127.0.0.1', PORT: String(await freePort()) };
      const proc = launch('src/bin/server.ts', [], env);
      expect((await waitForExit(proc, 60_000)).code).toBe(1);
      const fatal = logLines(proc.stdout).find((l) => l.msg === 'could not start');
      expect((fatal?.['err'] as { message: string } | undefined)?.message).toMatch(
        /^tron: the node trongrid-main does not answer or disagrees with CHAINS_FILE: POST \/wallet\/getnowblock at trongrid-main answered 500: cannot serve POST \[redacted\]\/wallet\/getnowblock\?\[redacted\] with {"x-tron-extra":"\[redacted\]","tron-pro-api-key":"\[redacted\]"}: {} \(mark it "optional": true to start without it\)$/,
      );
      expect(secretsIn(proc.stdout + proc.stderr)).toEqual([]);
    });
  });

  describe.runIf(DATABASES.includes('postgres'))('the chains worker', () => {
    it('logs and serves its own health and metrics without a secret', async () => {
      tronNode.mode = { proxyTo: `${fake.url}/tron`, strip: `/${SECRET.tronPath}` };
      const db = await freshDatabase('postgres');
      databases.push(db);
      const port = await freePort();
      const worker = launch('src/bin/chains-worker.ts', [], { ...chains, DATABASE_URL: db.url, LOG_LEVEL: 'debug', WORKER_METRICS_PORT: String(port), METRICS_TOKEN });
      await worker.waitForStdout((out) => out.includes('chains worker running'), 'the chains worker to start');
      tronNode.mode = 'echo500';
      await watchersFailed(worker);
      const ops = `http://127.0.0.1:${port}`;
      // Tron fails now, and it is not optional: the worker is not ready (the reasons are not on this listener).
      const ready = await eventually(
        () => http('GET', `${ops}/health/ready`),
        (r) => r.status === 503,
      );
      expect(ready.body).toMatchObject({ status: 'not_ready', checks: { chains: 'failing' } });
      const metrics = await http('GET', `${ops}/metrics`, { token: METRICS_TOKEN });
      expect(metrics.status).toBe(200);
      worker.child.kill('SIGTERM');
      await waitForExit(worker);
      expectNodesNamed(worker.stdout);
      for (const [where, text] of Object.entries({ ready: ready.text, metrics: metrics.text, stdout: worker.stdout, stderr: worker.stderr })) expect(secretsIn(text), where).toEqual([]);
    });
  });
});
