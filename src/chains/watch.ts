// The loop that runs a real adapter's scans: one process per network at a time (a lease on its cursor), its state
// saved after every scan so a restart resumes where it stopped, node failures retried, and its health kept for the
// health endpoint. What a scan finds it reports itself (TransferListener, OutgoingListener), and reports are
// idempotent: a scan repeated after a crash between reporting and saving changes nothing.
import type { Db } from '../db/client.ts';
import type { Network } from '../domain/assets.ts';
import type { Logger } from '../logger.ts';
import type { Job } from '../core/jobs.ts';
import { AppError } from '../errors/app-error.ts';
import type { TransferListener, TransferReport } from './adapter.ts';
import { CursorLease } from './store.ts';

export interface Scanner<S> {
  readonly network: Network;
  /** Where a network never scanned starts (e.g. the current tip). */
  initialState(): Promise<S>;
  /** One scan from `state`: what it finds is reported; answers the state to resume from. */
  scan(state: S): Promise<S>;
}

export interface WatchHealth {
  network: Network;
  /** `ok`: the last scan (or the last lease check, in a process that does not hold the lease) succeeded. */
  state: 'starting' | 'ok' | 'failing';
  /** Whether this process scans the network now (another one may hold the lease). */
  scanning: boolean;
  detail: string | null;
  lastOkAt: Date | null;
}

export class Watcher<S> {
  private readonly lease: CursorLease;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pass: Promise<void> | null = null;
  readonly health: WatchHealth;

  constructor(
    private readonly scanner: Scanner<S>,
    private readonly deps: { db: Db; logger: Logger },
    private readonly pollMs: number,
    leaseMs = Math.max(10_000, pollMs * 5),
  ) {
    // A lease outlives a few polls, and is renewed during a scan; a dead process's lease ends soon.
    this.lease = new CursorLease(deps.db, scanner.network, leaseMs);
    this.health = { network: scanner.network, state: 'starting', scanning: false, detail: null, lastOkAt: null };
  }

  job(): Job {
    return {
      name: `chain-watcher:${this.scanner.network}`,
      start: () => this.start(),
      stop: () => this.stop(),
      runOnce: () => this.once(),
      running: () => this.running,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
    if (this.health.scanning) await this.lease.release().catch(() => undefined);
    this.health.scanning = false;
  }

  /** One scan now (tests, operators); waits for one in progress first. */
  async once(): Promise<void> {
    await this.pass;
    this.pass = this.scanOnce();
    await this.pass;
    this.pass = null;
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pass = this.scanOnce().finally(() => {
        this.pass = null;
        this.schedule(this.pollMs);
      });
    }, ms);
    this.timer.unref();
  }

  /**
   * Runs `scan` while renewing the lease every third of its length: a scan longer than the lease (a backlog, a slow
   * node, a consolidation pass) is not taken over by another process halfway, which would sign sends twice.
   */
  private async whileRenewing<T>(scan: () => Promise<T>): Promise<T> {
    const renewal = setInterval(() => {
      this.lease.renew().then(
        (ours) => ours || this.deps.logger.warn({ network: this.scanner.network }, 'the watcher lease was taken over during a scan'),
        (e: unknown) => this.deps.logger.warn({ err: e, network: this.scanner.network }, 'the watcher lease could not be renewed'),
      );
    }, Math.max(100, Math.floor(this.lease.leaseMs / 3)));
    renewal.unref();
    try {
      return await scan();
    } finally {
      clearInterval(renewal);
    }
  }

  private async scanOnce(): Promise<void> {
    try {
      const state = await this.lease.hold(() => this.scanner.initialState());
      this.health.scanning = state !== null;
      if (state !== null) {
        const next = await this.whileRenewing(() => this.scanner.scan(state));
        if (!(await this.lease.save(next))) {
          this.health.scanning = false;
          this.deps.logger.warn({ network: this.scanner.network }, 'another process took over watching this network');
        }
      }
      if (this.health.state !== 'ok') this.deps.logger.info({ network: this.scanner.network }, 'chain watcher running');
      this.health.state = 'ok';
      this.health.detail = null;
      this.health.lastOkAt = new Date();
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      if (this.health.state !== 'failing' || this.health.detail !== detail) {
        this.deps.logger.error({ err: e, network: this.scanner.network }, 'chain watcher failed; retrying');
      }
      this.health.state = 'failing';
      this.health.detail = detail;
    }
  }
}

/**
 * Reports one transfer a scan found; answers whether it was taken. A refusal that repeating cannot change (no payment
 * address of ours, a report conflicting with the recorded one) is logged and passed over, so that one odd transfer
 * does not stop the network's scans for good. Anything else (the database) fails the scan, which runs again.
 */
export async function deliverReport(listener: TransferListener, logger: Logger, report: TransferReport): Promise<boolean> {
  try {
    await listener(report);
    return true;
  } catch (e) {
    // A refusal (unknown address, conflicting report, dust or a foreign asset on a static address) is final: retrying
    // it would hold the scan on that block for good. A busy database (503) or any other failure is retried.
    if (!(e instanceof AppError && e.status < 500)) throw e;
    logger.warn({ err: e, network: report.network, txHash: report.txHash, outputIndex: report.outputIndex }, 'a chain report was refused; passed over');
    return false;
  }
}
