// The soak's child processes: each role's entry point (commands.ts) compiled once per run by esbuild into one file
// (as test/global-setup.ts does for the tests: a kill -9 and restart then costs no tsx compile), started with its
// environment, killed with SIGKILL and started again. Output goes to a log file per process in the run's directory.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { COMMANDS, type Command } from './commands.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Bundles every command into `<ROOT>/.soak-build/<run>/` (two levels down, like src/<dir>/, so relative paths resolve). */
export async function buildCommands(run: string): Promise<Record<Command, string>> {
  const outdir = path.join(ROOT, '.soak-build', run);
  const names = Object.keys(COMMANDS) as Command[];
  await build({
    entryPoints: Object.fromEntries(names.map((n) => [n, path.join(ROOT, COMMANDS[n])])),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  return Object.fromEntries(names.map((n) => [n, path.join(outdir, `${n}.mjs`)])) as Record<Command, string>;
}

/** Runs a bundled command to its end; answers its exit code and output. */
export function runToEnd(bundle: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bundle, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** A long-running process the fault injector may kill: start, kill -9, start again with the same environment. */
export class Supervised {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly log: fs.WriteStream;
  starts = 0;

  constructor(
    readonly name: string,
    private readonly bundle: string,
    private readonly env: NodeJS.ProcessEnv,
    logDir: string,
    /** Resolves once the process serves (a health answer, a log line). */
    private readonly ready: (proc: Supervised) => Promise<boolean>,
  ) {
    this.log = fs.createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  output = '';

  /** Between spawn and ready. */
  starting = false;

  async start(timeoutMs = 90_000): Promise<void> {
    if (this.alive) return;
    this.starting = true;
    try {
      await this.spawnAndWait(timeoutMs);
    } finally {
      this.starting = false;
    }
  }

  private async spawnAndWait(timeoutMs: number): Promise<void> {
    this.starts++;
    this.output = '';
    const child = spawn(process.execPath, [this.bundle], { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    this.log.write(`\n==== start ${this.starts} pid ${child.pid} at ${new Date().toISOString()}\n`);
    const onData = (c: Buffer) => {
      this.log.write(c);
      // Only the start-up lines are matched on; keep the tail short.
      this.output = (this.output + c.toString('utf8')).slice(-20_000);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        running.delete(child);
        this.log.write(`\n==== exit ${code ?? signal} at ${new Date().toISOString()}\n`);
        resolve();
      }),
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${this.name} exited during start-up:\n${this.output.slice(-3000)}`);
      if (await this.ready(this).catch(() => false)) return;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.output.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  /** kill -9: no shutdown code runs. */
  async kill(): Promise<void> {
    if (!this.child || !this.alive) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, the graceful stop, then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.child || !this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  close(): void {
    this.log.end();
  }
}
