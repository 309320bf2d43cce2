// A worker process: consumes run jobs, applies each run's pending change, and reconciles runs
// whose jobs were lost. Start as many as you like; they share the work through BullMQ.
import { type Job, Worker } from 'bullmq';
import { loadConfigOrExit } from '../src/config.js';
import { createDb } from '../src/db.js';
import { isTransientError } from '../src/errors.js';
import { onShutdown, throttledWarn } from '../src/lib/process.js';
import { withTimeout } from '../src/lib/with-timeout.js';
import { createLogger } from '../src/logger.js';
import { bullConnection, createRunsQueue, RUNS_QUEUE, type RunJobData } from '../src/queue.js';
import { RunNotifier } from '../src/runs/run-notifier.js';
import { RunStore } from '../src/runs/run-store.js';
import { Reconciler } from './reconciler.js';
import { RunApplier, RunApplyError } from './run-applier.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel, { proc: 'worker', pid: process.pid });
const db = createDb(config, log);
const store = new RunStore(db);
const applier = new RunApplier(store);

/**
 * Applies every run a job names. Runs already applied (by an earlier attempt, a duplicate job or
 * another worker) are no-ops, so a retried job only redoes what is still owed.
 */
async function processRuns(job: Job<RunJobData>) {
  const runIds = Array.isArray(job.data?.runIds) ? job.data.runIds : [];
  const results = await Promise.allSettled(runIds.map((id) => applier.apply(id)));
  const errors = results.flatMap((r, i) =>
    r.status === 'rejected' ? [{ runId: runIds[i]!, err: r.reason as unknown }] : [],
  );
  if (errors.length === 0) return { runs: runIds.length };

  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  for (const { runId, err } of errors) {
    if (err instanceof RunApplyError && lastAttempt) {
      // Given up: the run is kept as failed with the reason, never silently dropped. A
      // transient error (MySQL away) is not the run's fault: the reconciler tries it later.
      await store.markFailed(runId, err.appliedSeq, err.message, new Date());
      log.error('run failed', { runId, err });
    } else if (!isTransientError(err) && !(err instanceof RunApplyError)) {
      log.error('unexpected error applying run', { runId, err, stack: (err as Error)?.stack });
    }
  }
  // Fail the attempt so BullMQ retries it with backoff (unless only given-up runs remain).
  const owed = errors.filter((e) => !(lastAttempt && e.err instanceof RunApplyError));
  if (owed.length > 0) throw owed[0]!.err;
  return { runs: runIds.length, failed: errors.length };
}

const worker = new Worker<RunJobData>(RUNS_QUEUE, processRuns, {
  connection: bullConnection(config, 'worker', 'wrs-worker'),
  prefix: config.queuePrefix,
  concurrency: config.workerConcurrency,
  lockDuration: config.workerLockMs,
  stalledInterval: Math.max(1000, Math.floor(config.workerLockMs / 2)),
  maxStalledCount: 5,
});
worker.on('error', throttledWarn(log, 'worker error'));
worker.on('failed', (job, err) => {
  if (job)
    log.warn('job attempt failed', {
      runs: job.data?.runIds?.length,
      attempt: job.attemptsMade,
      err,
    });
});

const queue = createRunsQueue(config, 'wrs-reconciler');
queue.on('error', throttledWarn(log, 'queue error'));
const reconciler = new Reconciler(
  store,
  new RunNotifier(queue, log),
  { intervalMs: config.reconcileIntervalMs, afterMs: config.reconcileAfterMs },
  log,
);
reconciler.start();
log.info('worker started', {
  concurrency: config.workerConcurrency,
  queuePrefix: config.queuePrefix,
});

onShutdown(log, config.shutdownTimeoutMs, async () => {
  await reconciler.stop();
  // Finish the jobs in hand, within the timeout; what is not finished is owed in MySQL and
  // picked up again by another worker (stalled job) or the reconciler.
  await withTimeout(worker.close(), config.shutdownTimeoutMs, 'worker close').catch(
    async (err: unknown) => {
      log.warn('active jobs did not finish in time', { err });
      await worker.close(true);
    },
  );
  await queue.close().catch(() => undefined);
  await db.destroy();
});
