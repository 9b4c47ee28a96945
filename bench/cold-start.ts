// Cold start: from spawning `npm start`'s command (no DATABASE_URL: embedded PGlite) to its first answers, on a
// fresh empty DATA_DIR and again on the directory that start left behind. Reported next to a baseline measured in
// the same run, a bare `node` process that opens PGlite on an empty directory (initdb) and answers `SELECT 1`:
// what every fresh start cost before the template (src/db/pglite-template.ts), so the figure to compare across
// machines is the ratio. On Linux the CPU time the process used until then is shown too: on a shared machine it
// moves much less than the wall time.
//
//   npx tsx bench/cold-start.ts
//   COLD_START_RUNS=5  COLD_START_COMMAND="node --import tsx src/bin/server.ts"  COLD_START_ROOT=<another checkout>
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(process.env['COLD_START_ROOT'] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const RUNS = Number(process.env['COLD_START_RUNS'] ?? 5);
const INVOICE = JSON.stringify({ invoiceCurrency: 'usd', items: [{ name: 'Coffee', price: 4.5 }] });

/** `npm start` without npm: the start script's command, run by this node. */
function startCommand(): string[] {
  const script = process.env['COLD_START_COMMAND'] ?? (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;
  const [bin, ...args] = script.split(/\s+/);
  if (bin !== 'node') throw new Error(`the start script does not run node: ${script}`);
  return args;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
/** User + system CPU ms a running process has used so far (Linux), or NaN. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

interface Start {
  health: number;
  healthCpu: number;
  invoice: number;
}

/** One start on `dataDir`: ms to the first 200 from /health, and to the first invoice created (fresh dir only). */
async function startOnce(dataDir: string, fresh: boolean): Promise<Start> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  delete env['DATABASE_URL'];
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, startCommand(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let exited = false;
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  try {
    const base = `http://127.0.0.1:${port}`;
    let health = 0;
    let healthCpu = NaN;
    while (!health) {
      if (exited || ms(t0) > 60_000) throw new Error(`the server did not answer /health:\n${stderr}`);
      const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
      if (ok) (health = ms(t0)), (healthCpu = cpuMs(child.pid));
      else await sleep(5);
    }
    let invoice = health;
    if (fresh) {
      let token: string | undefined;
      while (!(token = /"publicToken": "(\S+)"/.exec(stdout)?.[1])) {
        if (exited || ms(t0) > 60_000) throw new Error(`no demo merchant printed:\n${stdout}\n${stderr}`);
        await sleep(2);
      }
      const res = await fetch(`${base}/api/invoices/v1/regular`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: INVOICE,
      });
      if (res.status !== 201) throw new Error(`creating an invoice: ${res.status} ${await res.text()}`);
      invoice = ms(t0);
    }
    return { health, healthCpu, invoice };
  } finally {
    child.kill('SIGTERM');
    await exit;
  }
}

/** The floor: node starts, loads PGlite, runs initdb in an empty directory, answers a query. */
async function baselineOnce(dataDir: string): Promise<{ ms: number; cpu: number }> {
  const code = `import('@electric-sql/pglite').then(async ({ PGlite }) => { const db = await PGlite.create(process.argv[1]); await db.query('SELECT 1'); process.stdout.write('ready'); await db.close(); })`;
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, ['-e', code, dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = await new Promise<{ ms: number; cpu: number }>((resolve, reject) => {
    child.stdout.once('data', () => resolve({ ms: ms(t0), cpu: cpuMs(child.pid) }));
    child.once('exit', (c) => reject(new Error(`baseline exited with ${c}`)));
  });
  await new Promise((r) => child.once('exit', r));
  return ready;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-cold-'));
const rows = { baseline: [] as number[], freshHealth: [] as number[], freshInvoice: [] as number[], existingHealth: [] as number[] };
const cpu = { baseline: [] as number[], freshHealth: [] as number[], existingHealth: [] as number[] };
try {
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so that a busy moment on a shared machine weighs on all of them.
    const base = await baselineOnce(fs.mkdtempSync(path.join(tmp, 'base-')));
    rows.baseline.push(base.ms);
    cpu.baseline.push(base.cpu);
    const dataDir = fs.mkdtempSync(path.join(tmp, 'data-'));
    const fresh = await startOnce(dataDir, true);
    rows.freshHealth.push(fresh.health);
    cpu.freshHealth.push(fresh.healthCpu);
    rows.freshInvoice.push(fresh.invoice);
    const existing = await startOnce(dataDir, false);
    rows.existingHealth.push(existing.health);
    cpu.existingHealth.push(existing.healthCpu);
    console.error(
      `run ${i + 1}/${RUNS}: baseline ${base.ms.toFixed(0)} ms, fresh /health ${fresh.health.toFixed(0)} ms, ` +
        `first invoice ${fresh.invoice.toFixed(0)} ms, existing /health ${existing.health.toFixed(0)} ms`,
    );
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
const base = median(rows.baseline);
console.log(`cold start, ${RUNS} runs, ${ROOT}: node ${startCommand().join(' ')}`);
console.log('                                  median      max   median/baseline   CPU median');
const line = (name: string, xs: number[], cpuXs?: number[]) =>
  console.log(
    `${name.padEnd(32)} ${median(xs).toFixed(0).padStart(6)} ms ${Math.max(...xs).toFixed(0).padStart(6)} ms   ${(median(xs) / base).toFixed(2)}x` +
      (cpuXs ? `             ${median(cpuXs).toFixed(0).padStart(6)} ms` : ''),
  );
line('baseline: node + PGlite initdb', rows.baseline, cpu.baseline);
line('fresh dir: first /health', rows.freshHealth, cpu.freshHealth);
line('fresh dir: first invoice created', rows.freshInvoice);
line('existing dir: first /health', rows.existingHealth, cpu.existingHealth);
