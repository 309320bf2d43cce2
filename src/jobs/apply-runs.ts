// Job kind "apply runs": look at these runs and apply the change each one has waiting (a start,
// a step completion). One job names the runs of one or more committed batches, so its cost is
// shared by up to NOTIFY_BATCH runs; the processor is workers/processors/apply-runs.ts.
import type { Config } from '../config.js';
import { TRIM, type JobKind } from './job-kind.js';

export interface ApplyRunsData {
  runIds: string[];
}

/** Most runs named by one job. */
export const NOTIFY_BATCH = 100;

export const applyRunsJob: JobKind<ApplyRunsData> = {
  queue: '{workflow-runs}',
  concurrency: (config: Config) => config.workerConcurrency,
  options: (config: Config) => ({
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
    ...TRIM,
  }),
};

/**
 * A job id that makes an accidental second enqueue of the same changes a no-op: named after the
 * first change (a run's change is committed, hence notified, in one batch only) and the count.
 */
export function applyRunsJobId(
  first: { runId: string; seq: number },
  count: number,
  suffix = '',
): string {
  return `${first.runId}_${first.seq}_${count}${suffix}`;
}
