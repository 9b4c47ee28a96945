// What the soak stands on, all its own and gone afterwards: a fresh PostgreSQL database (migrated like the tests'
// template), a redis-server on a random port (the fault injector restarts it; the machine's shared Redis is never
// touched), anvil, and a round-robin TCP proxy in front of the server instances.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { postgresMigrationFactory } from '../../src/db/adapters.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { freePort } from '../../test/support/net.ts';

export const DEFAULT_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface SoakDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createSoakDatabase(adminUrl: string): Promise<SoakDatabase> {
  const name = `payrail_soak_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const factory = postgresMigrationFactory(url.toString());
  await applyMigrations(factory).finally(() => factory.close());
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A redis-server of the soak's own (no persistence), restartable on the same port. */
export class SoakRedis {
  private child: ChildProcess | null = null;
  private constructor(
    readonly binary: string,
    readonly port: number,
  ) {
    // One listener for all restarts: whichever redis-server runs when the soak ends goes with it.
    process.once('exit', () => this.child?.kill('SIGKILL'));
  }

  static async start(binary = 'redis-server'): Promise<SoakRedis> {
    const redis = new SoakRedis(binary, await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}) at start`);
      if (Date.now() > deadline) throw new Error('redis-server did not listen within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** kill -9, then the same port again after `downMs`. */
  async restart(downMs: number): Promise<void> {
    await this.kill();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/**
 * One address for the server instances: each new connection goes to the next instance (round robin), skipping
 * one that refuses (killed, restarting). A killed instance's connections break, as a load balancer's would.
 */
export async function startRoundRobinProxy(backends: number[]): Promise<{ port: number; url: string; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    const tryBackend = (left: number) => {
      if (left === 0 || client.destroyed) return client.destroy();
      const port = backends[next++ % backends.length]!;
      const upstream = net.connect(port, '127.0.0.1');
      const refused = () => tryBackend(left - 1);
      upstream.once('error', refused);
      upstream.once('connect', () => {
        upstream.off('error', refused);
        track(upstream);
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    tryBackend(backends.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
