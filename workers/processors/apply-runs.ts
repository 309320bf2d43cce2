// Processor of "apply runs" jobs (src/jobs/apply-runs.ts): applies every run a job names. Runs
// already applied (by an earlier attempt, a duplicate job or another worker) are no-ops, so a
// retried job only redoes what is still owed.
import type { Job } from 'bullmq';
import { isTransientError } from '../../src/errors.js';
import type { ApplyRunsData } from '../../src/jobs/apply-runs.js';
import type { Logger } from '../../src/logger.js';
import type { RunStore } from '../../src/runs/run-store.js';
import { RunApplyError, type RunApplier } from '../run-applier.js';

export function applyRunsProcessor(deps: { store: RunStore; applier: RunApplier; log: Logger }) {
  const { store, applier, log } = deps;
  return async (job: Job<ApplyRunsData>) => {
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
  };
}
