// What every process entry point does the same way: log what it cannot handle, and turn
// SIGTERM/SIGINT into one orderly shutdown bounded by a timeout.
import type { Logger } from '../logger.js';

export function onShutdown(log: Logger, timeoutMs: number, shutdown: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => {
      log.error('shutdown timed out; exiting', { timeoutMs });
      process.exit(1);
    }, timeoutMs + 2000);
    force.unref();
    shutdown().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('unhandledRejection', (err) => log.error('unhandled rejection', { err }));
  process.on('uncaughtException', (err) => {
    log.error('uncaught exception', { err, stack: err.stack });
    process.exit(1);
  });
}

/** Logs a repeating error (a lost Redis connection, say) at most once per interval. */
export function throttledWarn(
  log: Logger,
  msg: string,
  intervalMs = 10_000,
): (err: unknown) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    log.warn(msg, { err });
  };
}
