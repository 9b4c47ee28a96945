// /health/live and /health/ready as a load balancer sees them (no token, check names and states only) and as an
// operator does (the admin listener: why a check fails). Ready needs the database, every migration applied, every
// job running and the chain nodes that are not optional; each check is bounded, so an unreachable database answers
// 503 at once instead of hanging the probe.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, type AdminServer } from '../../src/admin/server.ts';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { DATABASES, freshDatabase, type TestDatabase } from '../support/databases.ts';
import { parsePrometheus, sampleValue, seriesOf } from '../support/prometheus.ts';
import { useServer } from '../support/server.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const ADMIN_TOKEN = 'operator-token-0123456789abcdefghij';
const METRICS_TOKEN = 'scrape-token-0123456789abcdefghij';
const ALL_OK = { database: 'ok', migrations: 'ok', jobs: 'ok', chains: 'ok', rates: 'ok' };

const get = async (base: string, p: string, token?: string) => {
  const res = await fetch(`${base}${p}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined, headers: res.headers };
};

describe.each(DATABASES)('/health/live and /health/ready on %s', (kind) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-health-'));
  const server = useServer(kind, { ADMIN_TOKEN, DATA_DIR: dataDir });
  let admin: AdminServer | undefined;
  beforeAll(async () => {
    admin = await startAdminServer(server.app);
  });
  afterAll(async () => {
    await admin?.stop();
    admin?.releaseStateFile();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('are 200 when everything runs, for anyone (load balancers carry no token), and never cached', async () => {
    const live = await get(server.url, '/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await get(server.url, '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: ALL_OK });
    expect(ready.headers.get('cache-control')).toBe('no-store');
    // The old endpoint is as it was.
    expect((await get(server.url, '/health')).body.status).toBe('ok');
  });

  it('a stopped job makes ready answer 503 naming jobs (the reason only on the admin listener); ready again once it runs', async () => {
    const sweeper = server.app.jobs.get('expiry-sweeper');
    await sweeper.stop();
    try {
      const ready = await get(server.url, '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not_ready', checks: { ...ALL_OK, jobs: 'failing' } });
      const detailed = await get(admin!.url, '/health/ready', ADMIN_TOKEN);
      expect(detailed.status).toBe(503);
      expect(detailed.body).toEqual({ status: 'not_ready', checks: { ...ALL_OK, jobs: 'failing' }, details: { jobs: 'stopped: expiry-sweeper' } });
      const metrics = parsePrometheus((await get(admin!.url, '/metrics', ADMIN_TOKEN)).text);
      expect(sampleValue(metrics, 'payrail_job_running', { job: 'expiry-sweeper' })).toBe(0);
      expect(sampleValue(metrics, 'payrail_job_running', { job: 'refund-sender' })).toBe(1);
      expect((await get(server.url, '/health/live')).status).toBe(200);
    } finally {
      sweeper.start();
    }
    expect((await get(server.url, '/health/ready')).body).toEqual({ status: 'ready', checks: ALL_OK });
  });

  it('a migration of prisma/migrations the database has no record of makes ready answer 503 naming migrations', async () => {
    const db = server.app.db.prisma;
    type Row = { id: string; checksum: string; finished_at: Date; migration_name: string; logs: string | null; started_at: Date; applied_steps_count: number };
    const [newest] = await db.$queryRaw<Row[]>`SELECT * FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`;
    await db.$executeRaw`DELETE FROM "_prisma_migrations" WHERE "id" = ${newest!.id}`;
    try {
      const ready = await get(server.url, '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not_ready', checks: { ...ALL_OK, migrations: 'failing' } });
      expect(ready.text).not.toContain(newest!.migration_name);
      const detailed = await get(admin!.url, '/health/ready', ADMIN_TOKEN);
      expect(detailed.body.details).toEqual({ migrations: `not applied: ${newest!.migration_name}` });
    } finally {
      await db.$executeRaw`INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "logs", "started_at", "applied_steps_count")
        VALUES (${newest!.id}, ${newest!.checksum}, ${newest!.finished_at}, ${newest!.migration_name}, ${newest!.logs}, ${newest!.started_at}, ${newest!.applied_steps_count})`;
    }
    expect((await get(server.url, '/health/ready')).status).toBe(200);
    // A migration recorded with another checksum (its file changed after it ran) is not applied as it is either.
    await db.$executeRaw`UPDATE "_prisma_migrations" SET "checksum" = 'changed' WHERE "id" = ${newest!.id}`;
    try {
      expect((await get(server.url, '/health/ready')).body.checks.migrations).toBe('failing');
    } finally {
      await db.$executeRaw`UPDATE "_prisma_migrations" SET "checksum" = ${newest!.checksum} WHERE "id" = ${newest!.id}`;
    }
    expect((await get(server.url, '/health/ready')).status).toBe(200);
  });
});

// The server reaches the shared PostgreSQL through a proxy this test cuts and restores; PostgreSQL itself keeps
// running for every other test.
describe.each(DATABASES.filter((k) => k === 'postgres'))('readiness while the database is unreachable (%s through a proxy)', () => {
  let db: TestDatabase | undefined;
  let proxy: TcpProxy | undefined;
  let app: App | undefined;
  beforeAll(async () => {
    db = await freshDatabase('postgres');
    const direct = new URL(db.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const config = loadConfig({ DATABASE_URL: viaProxy.toString(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DB_POOL_SIZE: '5', METRICS_TOKEN });
    app = await startApp(config, createLogger('silent'));
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await app?.stop();
    await proxy?.close();
    await db?.drop();
  });

  it('answers 503 naming database within the check timeout, stays live, keeps /metrics answering, and is ready again once it is back', async () => {
    expect((await get(app!.url, '/health/ready')).body).toEqual({ status: 'ready', checks: ALL_OK });
    expect(proxy!.open).toBeGreaterThan(0);

    await proxy!.cut();
    const started = Date.now();
    const ready = await get(app!.url, '/health/ready');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'not_ready', checks: { database: 'failing', migrations: 'failing', jobs: 'ok', chains: 'ok', rates: 'ok' } });
    expect((await get(app!.url, '/health/live')).status).toBe(200);
    // The scrape goes on without the gauges it cannot read, and says so.
    const scraped = await get(app!.url, '/metrics', METRICS_TOKEN);
    expect(scraped.status).toBe(200);
    const metrics = parsePrometheus(scraped.text);
    expect(seriesOf(metrics, 'payrail_webhook_deliveries_pending')).toEqual({});
    expect(sampleValue(metrics, 'payrail_metrics_collect_failures_total', { metric: 'payrail_webhook_deliveries_pending' })).toBe(1);
    expect(sampleValue(metrics, 'payrail_database_info', { kind: 'postgres' })).toBe(1);

    await proxy!.restore();
    await expect.poll(async () => (await get(app!.url, '/health/ready')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    expect((await get(app!.url, '/health/ready')).body).toEqual({ status: 'ready', checks: ALL_OK });
    const after = parsePrometheus((await get(app!.url, '/metrics', METRICS_TOKEN)).text);
    expect(seriesOf(after, 'payrail_webhook_deliveries_pending')).toEqual({ 'state=due': 0, 'state=scheduled': 0 });
  });

  it('answers 503 after the check timeout when the database takes connections and never answers, and /metrics after its deadline', async () => {
    proxy!.stall();
    try {
      const started = Date.now();
      const [ready, scraped] = await Promise.all([get(app!.url, '/health/ready'), get(app!.url, '/metrics', METRICS_TOKEN)]);
      // Each check and each scrape-time gauge has 2 s.
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not_ready', checks: { database: 'failing', migrations: 'failing', jobs: 'ok', chains: 'ok', rates: 'ok' } });
      expect(scraped.status).toBe(200);
      expect(seriesOf(parsePrometheus(scraped.text), 'payrail_refunds_queued')).toEqual({});
      expect((await get(app!.url, '/health/live')).status).toBe(200);
    } finally {
      await proxy!.restore();
    }
    await expect.poll(async () => (await get(app!.url, '/health/ready')).status, { timeout: 15_000, interval: 200 }).toBe(200);
  });
});
