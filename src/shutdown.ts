import type { Logger } from './logger.ts';

/** Share of the shutdown deadline in-flight requests get; the rest is for jobs and closing the database. */
export const DRAIN_SHARE = 0.6;

/**
 * SIGTERM/SIGINT run `stop` once; whatever happens, the process exits within `timeoutMs` (exit code 1 when the
 * deadline, not `stop`, ended it). A second signal changes nothing: the deadline already stands.
 */
export function exitOnSignals(stop: () => Promise<void>, options: { timeoutMs: number; logger: Logger; name: string }): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ signal }, `${options.name} stopping`);
    const deadline = setTimeout(() => {
      options.logger.error({ timeoutMs: options.timeoutMs }, `${options.name} did not stop within SHUTDOWN_TIMEOUT_MS; exiting now`);
      process.exit(1);
    }, options.timeoutMs);
    deadline.unref();
    stop().then(
      () => {
        options.logger.info(`${options.name} stopped`);
        process.exit(0);
      },
      (e: unknown) => {
        options.logger.error({ err: e }, `${options.name}: unclean shutdown`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
