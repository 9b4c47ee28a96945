// Background work of a process: the expiry sweeper, the refund sender, pruners, the webhook worker. State lives in
// the database, so a restart resumes every job; runs of one job never overlap.
import type { Logger } from '../logger.ts';
import type { BusMessage, EventBus } from './bus.ts';

export interface Job {
  name: string;
  /**
   * It sends on chain (withdrawals, refunds): it runs where the chains are watched and the signer is held, the server
   * or, with CHAIN_WORKER=0, `npm run chains:worker`.
   */
  onChain?: boolean;
  start(): void;
  /** Stops and waits for a run in progress. */
  stop(): Promise<void>;
  /** One run now (tests, operators); waits for a run in progress first. */
  runOnce(): Promise<unknown>;
  /** Started and not stopped (readiness and metrics). */
  running(): boolean;
}

/** A job that runs `run` every `everyMs` (and once at start). */
export function intervalJob(name: string, everyMs: number, run: () => Promise<unknown>, logger: Logger): Job {
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<unknown> | null = null;
  const once = (): Promise<unknown> => {
    current ??= run()
      .catch((e: unknown) => logger.error({ err: e, job: name }, 'background job failed'))
      .finally(() => {
        current = null;
      });
    return current;
  };
  return {
    name,
    start() {
      timer ??= setInterval(() => void once(), everyMs);
      timer.unref();
      void once();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await current;
    },
    async runOnce() {
      await current;
      return once();
    },
    running: () => timer !== null,
  };
}

export class JobRunner {
  private started = false;
  constructor(readonly jobs: Job[]) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const job of this.jobs) job.start();
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.jobs.map((j) => j.stop()));
  }

  get(name: string): Job {
    const job = this.jobs.find((j) => j.name === name);
    if (!job) throw new Error(`no job ${name}`);
    return job;
  }
}

/** Marks a job as one that sends on chain (Job.onChain). */
export const chainJob = (job: Job): Job => ({ ...job, onChain: true });

/**
 * `job` also runs as soon as a committed event it waits for is published, not only on its interval. Wake-ups during
 * a run fold into one more run after it.
 */
export function wakingOn(job: Job, bus: Pick<EventBus, 'subscribe'>, wanted: (m: BusMessage) => boolean): Job {
  let unsubscribe: (() => void) | null = null;
  let running = false;
  let again = false;
  const wake = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await job.runOnce();
      } while (again);
    } finally {
      running = false;
    }
  };
  return {
    ...job,
    start() {
      unsubscribe ??= bus.subscribe((m) => {
        if (wanted(m)) void wake();
      });
      job.start();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = null;
      await job.stop();
    },
  };
}
