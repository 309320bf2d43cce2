// Processor of "apply runs" jobs (src/jobs/apply-runs.ts): an organization's turn. Waits,
// when the organization's last turn began less than WORKER_GATHER_MS ago, for the rest of that
// time (turn-pacer.ts); then reads the organization's oldest owed runs (at most TURN_RUNS),
// applies them, and when it found as many as it may take, asks for the organization's next
// turn, which queues behind the turns of every other organization already waiting: round robin
// between organizations.
//
// Runs already applied (by an earlier attempt, or another worker) are no-ops, so a retried
// turn only redoes what is still owed. A run that cannot be applied is marked failed at once,
// with the reason, so that it never holds up its organization's other runs; a transient error
// (MySQL away) is nobody's fault and fails the turn, which BullMQ retries with backoff.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import { isTransientError } from '../../src/errors.js';
import type { ApplyRunsData, RunJobs } from '../../src/jobs/apply-runs.js';
import type { Logger } from '../../src/logger.js';
import type { RunStore } from '../../src/runs/run-store.js';
import { APPLY_BATCH, APPLY_IN_FLIGHT, RunApplyError, type RunApplier } from '../run-applier.js';
import type { TurnPacer } from '../turn-pacer.js';

/**
 * Most runs one turn takes: as many as the applier has in flight at once, so a turn keeps the
 * applier's transactions busy without queueing more behind them, and another organization's
 * turn waits behind one of the applier's batches at most.
 */
export const TURN_RUNS = APPLY_BATCH * APPLY_IN_FLIGHT;

export function applyRunsProcessor(deps: {
  store: RunStore;
  applier: RunApplier;
  jobs: RunJobs;
  log: Logger;
  /** Spaces an organization's turns while its changes come in a steady flow (turn-pacer.ts). */
  pacer?: TurnPacer;
  turnRuns?: number;
}) {
  const { store, applier, jobs, log, pacer, turnRuns = TURN_RUNS } = deps;
  return async (job: Job<ApplyRunsData>) => {
    const organizationId = job.data?.organizationId;
    // A job of another shape (an older version's): the reconciler finds what it meant in MySQL.
    if (typeof organizationId !== 'string') return { runs: 0 };
    const wait = pacer?.wait(organizationId, Date.now()) ?? 0;
    if (wait > 0) await sleep(wait);
    const rows = await store.owedRuns(organizationId, turnRuns);
    // More may be owed: the next turn is asked for now, and queued when this one ends.
    if (rows.length === turnRuns) await jobs.enqueue([organizationId]);

    const runIds = rows.map((row) => row.id);
    const results = await Promise.allSettled(rows.map((row) => applier.apply(row.id, row)));
    let failed = 0;
    let owed: unknown;
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') continue;
      const err: unknown = result.reason;
      const runId = runIds[i]!;
      if (err instanceof RunApplyError) {
        // Kept as failed with the reason, never silently dropped; a retry asks for it again.
        await store.markFailed(runId, err.appliedSeq, err.message, new Date());
        log.error('run failed', { runId, err });
        failed++;
      } else {
        if (!isTransientError(err)) {
          log.error('unexpected error applying run', { runId, err, stack: (err as Error)?.stack });
        }
        owed ??= err;
      }
    }
    // Fail the attempt so BullMQ retries the turn with backoff.
    if (owed !== undefined) throw owed;
    return { runs: runIds.length, failed };
  };
}
