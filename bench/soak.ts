// npm run soak — the chaos soak (docs/soak.md): PostgreSQL, Redis and anvil; three server instances behind a
// round-robin proxy, the webhook worker and the chains worker; a mixed load of several merchants in both modes while
// a fault injector kills processes, terminates database sessions, restarts Redis and makes webhook receivers hang
// or fail. Then quiet, and one line per invariant; exit 1 on any failure.
//
// SOAK_SECONDS (default 120), SOAK_SEED (replay a printed seed), SOAK_ACTORS (default 4), SOAK_MERCHANTS (default
// 4, the first half also in live mode), SOAK_DATABASE_URL (a PostgreSQL server to create the run's database on;
// default TEST_DATABASE_URL, then the local one), SOAK_FAULTS=0 (no faults), SOAK_PLANT (planted bugs: the proof).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseEther, type Address } from 'viem';
import { HOT_WALLET, Signer } from '../src/chains/signer.ts';
import { CONFIG_VARIABLES } from '../src/config.ts';
import { buildWebAssets, webAssetsFresh } from '../src/web/assets.ts';
import { startAnvil, type Anvil } from '../test/support/anvil-node.ts';
import { freePort } from '../test/support/net.ts';
import { call } from './soak/api.ts';
import { CHECKER_APPLICATION, injectFaults } from './soak/faults.ts';
import { createSoakDatabase, DEFAULT_ADMIN_URL, SoakRedis, startRoundRobinProxy, type SoakDatabase } from './soak/infra.ts';
import { acknowledgedWrites, balanceCheck, chainPayoutCheck, subscriberCheck, subscriberSets, webhookChecks, type Verdict } from './soak/invariants.ts';
import { actor, Payers, randomEvmAddress, type LoadContext } from './soak/load.ts';
import { Tally, type Ledger, type Mode, type Tenant } from './soak/model.ts';
import { buildCommands, ROOT, runToEnd, Supervised } from './soak/procs.ts';
import { Receiver } from './soak/receivers.ts';
import { Rng } from './soak/rng.ts';
import { startSubscriber, type Subscriber } from './soak/subscribers.ts';

/** BIP-39's second test vector, as in the tests (test/support/chains.ts): never for money. */
const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const STATIC_LIVE_RATES = path.join(ROOT, 'test/fixtures/rates/static-live.json');
const PIPELINE = 4;
const CONFIRMATIONS = 2;
const QUIET_TIMEOUT_MS = 300_000;

const startedAt = Date.now();
const seconds = Number(process.env['SOAK_SECONDS'] ?? 120);
const seed = process.env['SOAK_SEED'] ? Number(process.env['SOAK_SEED']) : randomBytes(4).readUInt32BE();
const actors = Number(process.env['SOAK_ACTORS'] ?? 4);
const merchants = Number(process.env['SOAK_MERCHANTS'] ?? 4);
const plant = process.env['SOAK_PLANT'] ?? '';
// 0: no faults (the planted-bug proof, where a bug must show on its own).
const faults = process.env['SOAK_FAULTS'] !== '0';
const adminUrl = process.env['SOAK_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'] ?? DEFAULT_ADMIN_URL;
if (!(seconds > 0) || !Number.isInteger(seed) || !(actors > 0) || !(merchants >= 2)) {
  console.error('SOAK_SECONDS must be > 0, SOAK_SEED an integer, SOAK_ACTORS > 0, SOAK_MERCHANTS >= 2');
  process.exit(2);
}

const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
const log = (line: string) => process.stderr.write(`[soak ${elapsed()}] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

console.log(`SOAK seed ${seed} (replay: SOAK_SEED=${seed}), ${seconds} s of load, ${actors} actors, ${merchants} merchants${faults ? '' : ', no faults'}${plant ? `, planted bugs: ${plant}` : ''}`);
const rng = new Rng(seed);
const run = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-soak-'));
const logDir = path.join(runDir, 'logs');
fs.mkdirSync(logDir);

const ledger: Ledger = { acked: [], ops: new Tally(), faults: new Tally(), sessionsTerminated: 0, negativeBalances: [] };
const cleanups: (() => Promise<unknown>)[] = [];
let exitCode = 2;

try {
  exitCode = await soak();
} catch (e) {
  console.log(`SOAK ERROR ${(e as Error).stack ?? String(e)}`);
  exitCode = 2;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((e: Error) => log(`cleanup: ${e.message}`));
  fs.rmSync(path.join(ROOT, '.soak-build', run), { recursive: true, force: true });
  if (exitCode === 0) fs.rmSync(runDir, { recursive: true, force: true });
  else console.log(`SOAK logs kept in ${logDir}`);
}
process.exit(exitCode);

async function soak(): Promise<number> {
  const bundles = await buildCommands(run);
  if (!webAssetsFresh()) await buildWebAssets();

  const database: SoakDatabase = await createSoakDatabase(adminUrl);
  // A failed run keeps its database (the attempt log, the events) beside its logs, to read what happened.
  cleanups.push(async () => (exitCode === 1 ? console.log(`SOAK database kept: ${database.name} (drop it when done)`) : database.drop()));
  const redis = await SoakRedis.start();
  cleanups.push(() => redis.kill());
  const anvil: Anvil = await startAnvil({ accounts: 6 });
  cleanups.push(() => anvil.stop());
  const signer = Signer.fromMnemonic(MNEMONIC);
  const hot = signer.evmAccount('ethereum', HOT_WALLET).address as Address;
  // The hot wallet pays withdrawals and refunds (consolidation, which would fill it, is left out: a day apart).
  await anvil.test.setBalance({ address: hot, value: parseEther('100000') });
  const chainsFile = path.join(runDir, 'chains.json');
  fs.writeFileSync(
    chainsFile,
    JSON.stringify({ ethereum: { rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, xpub: signer.accountXpub('ethereum', false), confirmations: CONFIRMATIONS, pollMs: 200, sweepIntervalMs: 86_400_000 } }),
  );
  log(`database ${database.name}, redis ${redis.url}, anvil ${anvil.rpcUrl}; logs in ${logDir}`);

  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete base[name];
  const shared: NodeJS.ProcessEnv = {
    ...base,
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    CHAINS_FILE: chainsFile,
    RATES_CONFIG: STATIC_LIVE_RATES,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    DB_POOL_SIZE: '4',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '4000',
    WEBHOOK_POLL_MS: '250',
    WEBHOOK_PIPELINE: String(PIPELINE),
    EVENT_POLL_MS: '250',
    SWEEP_INTERVAL_MS: '2000',
    REFUND_RETRY_INTERVAL_MS: '1000',
    WITHDRAWAL_SEND_INTERVAL_MS: '1000',
    WITHDRAWAL_SEND_LEASE_MS: '3000',
    LIVE_MAX_CONNECTIONS_PER_IP: '10000',
    SHUTDOWN_TIMEOUT_MS: '5000',
    SOAK_PLANT: plant,
  };
  const dataDir = (name: string) => {
    const dir = path.join(runDir, 'data', name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  const cliEnv = { ...shared, DATA_DIR: dataDir('cli'), LOG_LEVEL: 'silent' };

  // Merchants, made with the CLI before any server runs (as the tests do on PostgreSQL).
  const db = new pg.Pool({ connectionString: database.url, max: 3, application_name: CHECKER_APPLICATION });
  db.on('error', () => undefined);
  cleanups.push(() => db.end());
  const tenants: Tenant[] = [];
  for (let i = 1; i <= merchants; i++) {
    const created = await runToEnd(bundles.merchantCli, ['create', '--name', `Soak merchant ${i}`], cliEnv);
    if (created.code !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
    const account = JSON.parse(created.stdout) as { companyId: string } & Record<Mode, { publicToken: string; secretKey: string }>;
    const modes: Mode[] = i <= Math.ceil(merchants / 2) ? ['test', 'live'] : ['test'];
    for (const mode of modes) {
      const { rows } = await db.query<{ id: string }>(`SELECT "id"::text AS id FROM "Company" WHERE "accountId" = $1 AND "mode" = $2`, [account.companyId, mode]);
      const label = `m${i}-${mode}`;
      const secretKey = account[mode].secretKey;
      // Live endpoints are never made to fail: their retries run on real time, which the quiet phase cannot hasten.
      const receiver = new Receiver(label, (i + tenants.length) % 2 === 0 ? 'slow' : 'ok', () => secretKey, () => rng.int(100, 400));
      await receiver.start();
      cleanups.push(() => receiver.close());
      tenants.push({ label, mode, tenantId: rows[0]!.id, token: account[mode].publicToken, secretKey, receiver, created: [], pending: [], wrong: [], staticAddresses: [] });
    }
  }

  // The processes: three servers (no chain work, no webhooks), the webhook worker, the chains worker (the signer).
  const serverPorts = await Promise.all([1, 2, 3].map(() => freePort()));
  const healthy = (port: number) => async () => (await call(`http://127.0.0.1:${port}`, 'GET', '/health', { timeoutMs: 2_000 })).status === 200;
  const servers = serverPorts.map(
    (port, i) =>
      new Supervised(`server-${i + 1}`, bundles.server, { ...shared, PORT: String(port), DATA_DIR: dataDir(`server-${i + 1}`), CHAIN_WORKER: '0', WEBHOOK_WORKER: '0' }, logDir, healthy(port)),
  );
  const webhooksWorker = new Supervised('webhooks-worker', bundles.webhooksWorker, { ...shared, LOG_LEVEL: 'info', DATA_DIR: dataDir('webhooks-worker') }, logDir, async (p) =>
    p.output.includes('webhook worker running'),
  );
  const chainsWorker = new Supervised('chains-worker', bundles.chainsWorker, { ...shared, LOG_LEVEL: 'info', DATA_DIR: dataDir('chains-worker'), SIGNER_MNEMONIC: MNEMONIC }, logDir, async (p) =>
    p.output.includes('chains worker running'),
  );
  const processes = [...servers, webhooksWorker, chainsWorker];
  cleanups.push(() => Promise.all(processes.map(async (p) => (await p.stop(), p.close()))));
  await Promise.all(processes.map((p) => p.start()));
  const proxy = await startRoundRobinProxy(serverPorts);
  cleanups.push(() => proxy.close());
  log(`${processes.length} processes up; proxy ${proxy.url}`);

  // Settings before the load: each endpoint's URL, an auto-withdrawal rule for one tenant of each mode.
  for (const t of tenants) {
    const res = await call(proxy.url, 'PUT', '/api/company/settings/webhook-url', { token: t.token, json: { webHookUrl: t.receiver.url } });
    if (res.status !== 200) throw new Error(`webhook URL of ${t.label}: ${res.status} ${res.text}`);
    ledger.acked.push({ kind: 'webhook-url', id: t.tenantId, tenantId: t.tenantId, detail: t.receiver.url });
  }
  for (const t of [tenants.find((x) => x.mode === 'test')!, tenants.find((x) => x.mode === 'live')!]) {
    const rule = { amount: t.mode === 'test' ? 1 : 0.2, isEnabled: true, withdrawalTag: null, withdrawalAddress: randomEvmAddress() };
    const res = await call(proxy.url, 'PATCH', '/api/company/auto-withdrawals', { token: t.token, json: { assets: { eth: rule } } });
    if (res.status !== 200) throw new Error(`auto-withdrawal rule of ${t.label}: ${res.status} ${res.text}`);
    ledger.acked.push({ kind: 'auto-withdrawal', id: t.tenantId, tenantId: t.tenantId });
  }

  const subscribers: Subscriber[] = tenants.map((t, i) =>
    startSubscriber({ label: t.label, tenantId: t.tenantId, token: t.token, baseUrl: proxy.url, transport: i % 2 === 0 ? 'ws' : 'sse', rng: rng.fork() }),
  );
  cleanups.push(() => Promise.all(subscribers.map((s) => s.stop())));
  await sleep(1_000);

  // anvil mines only when told: a block every 400 ms, load or not, until the end.
  let mining = true;
  const miner = (async () => {
    while (mining) {
      await anvil.mine(1).catch(() => undefined);
      await sleep(400);
    }
  })();
  cleanups.push(async () => {
    mining = false;
    await miner;
  });

  // The load and the faults, for SOAK_SECONDS.
  const loadEnds = Date.now() + seconds * 1_000;
  const loading = () => Date.now() < loadEnds;
  const ctx: LoadContext = { baseUrl: proxy.url, tenants, ledger, db, anvil, payers: new Payers(anvil) };
  log(`load for ${seconds} s`);
  const loadStarted = Date.now();
  await Promise.all([
    ...Array.from({ length: actors }, () => actor(rng.fork(), ctx, loading, [20, 120])),
    faults &&
      injectFaults(
        rng.fork(),
        { processes, redis, adminUrl, database: database.name, receivers: tenants.filter((t) => t.mode === 'test'), ledger, log },
        loading,
        [1_500, 4_000],
      ),
  ]);
  const loadMs = Date.now() - loadStarted;
  log(`load and faults stopped: ${ledger.ops.total()} operations, ${ledger.faults.total()} faults; waiting for quiet`);

  const quietStarted = Date.now();
  const quiet = await waitForQuiet({ db, tenants, processes, baseUrl: proxy.url, subscribers });
  const quietMs = Date.now() - quietStarted;
  await Promise.all(subscribers.map((s) => s.stop()));

  const verdicts: Verdict[] = [{ name: 'quiet reached', pass: quiet.reached, figures: `in ${(quietMs / 1000).toFixed(1)} s${quiet.reached ? '' : `; still: ${quiet.remaining}`}` }];
  verdicts.push(await acknowledgedWrites(db, ledger.acked));
  for (const mode of ['test', 'live'] as const) verdicts.push(await ledgerVerify(bundles.ledgerVerify, cliEnv, mode));
  const webhooks = await webhookChecks(db, tenants, ledger, PIPELINE);
  verdicts.push(...webhooks.verdicts);
  verdicts.push(await subscriberCheck(db, subscribers));
  verdicts.push(await chainPayoutCheck(db, anvil, hot));
  verdicts.push(await balanceCheck(db, ledger));

  const restarts = processes.reduce((n, p) => n + p.starts - 1, 0);
  const [made] = (
    await db.query<Record<string, number>>(
      `SELECT (SELECT COUNT(*)::int FROM "Invoice") AS invoices, (SELECT COUNT(*)::int FROM "Invoice" WHERE "status" = 'done') AS "done invoices",
         (SELECT COUNT(*)::int FROM "ChainTransfer" WHERE "mode" = 'live') AS "live transfers", (SELECT COUNT(*)::int FROM "Refund") AS refunds,
         (SELECT COUNT(*)::int FROM "Withdrawal") AS withdrawals, (SELECT COUNT(*)::int FROM "Withdrawal" WHERE "origin" = 'auto') AS "auto-withdrawals",
         (SELECT COUNT(*)::int FROM "ChainTransfer" WHERE "invoiceId" IS NULL) AS deposits, (SELECT COUNT(*)::int FROM "Event") AS events`,
    )
  ).rows;
  console.log(`TOTAL in the database: ${Object.entries(made!).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`TOTAL operations ${ledger.ops.total()}: ${ledger.ops.line()}`);
  console.log(`TOTAL faults ${ledger.faults.total()}: ${ledger.faults.line()}; ${ledger.sessionsTerminated} sessions terminated, ${restarts} process restarts`);
  console.log(`TOTAL elapsed ${elapsed()}: load ${(loadMs / 1000).toFixed(1)} s, quiet ${(quietMs / 1000).toFixed(1)} s`);
  for (const note of webhooks.notes) console.log(`NOTE ${note}`);
  for (const v of verdicts) console.log(`${v.pass ? 'PASS' : 'FAIL'} ${v.name}: ${v.figures}`);
  const failed = verdicts.filter((v) => !v.pass).length;
  console.log(failed ? `SOAK FAIL: ${failed} of ${verdicts.length} invariants failed (seed ${seed})` : `SOAK PASS: ${verdicts.length} invariants hold (seed ${seed})`);
  return failed ? 1 : 0;
}

/** ledger:verify of one mode, run as the operator runs it (the CLI, on the database directly). */
async function ledgerVerify(bundle: string, env: NodeJS.ProcessEnv, mode: Mode): Promise<Verdict> {
  const res = await runToEnd(bundle, ['--mode', mode], env);
  let report: { ok?: boolean; journals?: number; balances?: number; problems?: { check: string; key: string; actual: string }[] } = {};
  try {
    report = JSON.parse(res.stdout) as typeof report;
  } catch {
    report = {};
  }
  const problems = report.problems ?? [];
  return {
    name: `ledger:verify --mode ${mode}`,
    pass: res.code === 0 && report.ok === true,
    figures: `exit ${res.code}, ${report.journals ?? '?'} journals, ${report.balances ?? '?'} balances, ${problems.length} problems${problems.length ? ` (${problems.slice(0, 3).map((p) => `${p.check} ${p.key}: ${p.actual}`).join('; ')})` : ''}`,
  };
}

interface QuietInput {
  db: pg.Pool;
  tenants: Tenant[];
  processes: Supervised[];
  baseUrl: string;
  subscribers: Subscriber[];
}

/**
 * Until nothing is in motion: every process up, the sandbox's seen transfers and sent withdrawals settled (anvil
 * keeps mining for the live ones), refunds out, no webhook delivery pending (test clocks moved on to a pending
 * retry: the schedule runs on them), every subscriber caught up with the event table.
 */
async function waitForQuiet(input: QuietInput): Promise<{ reached: boolean; remaining: string }> {
  const { db, tenants, baseUrl } = input;
  const byTenant = new Map(tenants.map((t) => [t.tenantId, t]));
  const deadline = Date.now() + QUIET_TIMEOUT_MS;
  let lastReport = 0;
  let remaining = '';
  for (const t of tenants) t.receiver.episode = null;
  while (Date.now() < deadline) {
    for (const p of input.processes) if (!p.alive) await p.start().catch((e: Error) => log(`restart of ${p.name}: ${e.message.split('\n')[0]}`));
    const q = async <T extends pg.QueryResultRow>(sql: string) => (await db.query<T>(sql)).rows;
    const seen = await q<{ id: string; companyId: string }>(`SELECT "id"::text AS id, "companyId"::text AS "companyId" FROM "ChainTransfer" WHERE "state" = 'seen' AND "mode" = 'test'`);
    await inParallel(seen, (s) => call(baseUrl, 'POST', `/api/sandbox/transfers/${s.id}/confirm`, { token: byTenant.get(s.companyId)?.token, json: {} }));
    const sent = await q<{ uid: string; companyId: string }>(
      `SELECT w."uid"::text AS uid, w."companyId"::text AS "companyId" FROM "Withdrawal" w JOIN "Company" c ON c."id" = w."companyId" WHERE c."mode" = 'test' AND w."status" = 'processing' AND w."stage" = 'sent'`,
    );
    await inParallel(sent, (w) => call(baseUrl, 'POST', `/api/sandbox/withdrawals/${w.uid}/confirm`, { token: byTenant.get(w.companyId)?.token, json: {} }));
    // A test-mode retry waiting on the schedule: move that merchant's clock to it.
    const retries = await q<{ companyId: string; waitMs: string }>(
      `SELECT d."companyId"::text AS "companyId", EXTRACT(EPOCH FROM MIN(d."nextAttemptAt") - (now() + make_interval(secs => COALESCE(MAX(k."offsetMs"), 0) / 1000.0))) * 1000 AS "waitMs"
       FROM "WebhookDelivery" d JOIN "Company" c ON c."id" = d."companyId" LEFT JOIN "SandboxClock" k ON k."companyId" = d."companyId"
       WHERE d."status" = 'pending' AND c."mode" = 'test' GROUP BY d."companyId"`,
    );
    // Live mode's schedule runs on real time (5 s, then a minute, then 5 minutes...): a retry is made due now.
    await db.query(
      `UPDATE "WebhookDelivery" d SET "nextAttemptAt" = now() FROM "Company" c
       WHERE c."id" = d."companyId" AND c."mode" = 'live' AND d."status" = 'pending' AND d."nextAttemptAt" > now() + interval '3 seconds'`,
    );
    for (const r of retries) {
      const waitMs = Number(r.waitMs);
      if (waitMs > 3_000) await call(baseUrl, 'POST', '/api/sandbox/clock/advance', { token: byTenant.get(r.companyId)?.token, json: { minutes: Math.ceil(waitMs / 60_000) } }).catch(() => undefined);
    }
    const [counts] = await q<Record<string, number>>(
      `SELECT
         (SELECT COUNT(*)::int FROM "Withdrawal" WHERE "status" = 'processing') AS "processing withdrawals",
         (SELECT COUNT(*)::int FROM "Refund" r JOIN "Company" c ON c."id" = r."companyId" WHERE r."status" = 'queued' OR (c."mode" = 'live' AND r."status" <> 'confirmed')) AS "refunds in flight",
         (SELECT COUNT(*)::int FROM "ChainTransfer" WHERE "state" = 'seen') AS "unconfirmed transfers",
         (SELECT COUNT(*)::int FROM "WebhookDelivery" WHERE "status" = 'pending') AS "pending deliveries"`,
    );
    let behind = 0;
    for (const s of input.subscribers) {
      const { expected, got } = await subscriberSets(db, s, 'all');
      for (const c of expected) if (!got.has(c)) behind++;
    }
    const open = { ...counts!, 'changes subscribers lack': behind };
    remaining = Object.entries(open)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    if (!remaining) return { reached: true, remaining };
    if (Date.now() - lastReport > 10_000) {
      log(`quiet: waiting for ${remaining}`);
      lastReport = Date.now();
    }
    await sleep(500);
  }
  return { reached: false, remaining };
}

/** `task` for every item, eight at a time; failures are left for the next round. */
async function inParallel<T>(items: T[], task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]!).catch(() => undefined);
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}
