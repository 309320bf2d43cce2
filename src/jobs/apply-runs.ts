// Job kind "apply runs": look at these runs and apply the change each one has waiting (a start,
// a step completion). One job names the runs of one or more committed batches, so its cost is
// shared by up to NOTIFY_BATCH runs; the processor is workers/processors/apply-runs.ts, and
// src/runs/run-notifier.ts gathers the API's changes into few enqueues.
import type { Config } from '../config.js';
import { retries, TRIM, type JobKind, type NewJob } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface ApplyRunsData {
  runIds: string[];
}

/** A run whose change (up to `seq`) is committed and waits to be applied. */
export interface RunChange {
  runId: string;
  seq: number;
}

/** Most runs named by one job. */
export const NOTIFY_BATCH = 100;

const NAME = 'apply';

export const applyRunsJob: JobKind<ApplyRunsData, RunChange> = {
  queue: '{workflow-runs}',
  jobName: NAME,
  concurrency: (config: Config) => config.workerConcurrency,
  options: (config: Config) => ({ ...retries(config), ...TRIM }),
  // One job per NOTIFY_BATCH changes. The suffix is the reconciler's round or a retry's.
  jobs(changes, { suffix = '' }) {
    const jobs: Array<NewJob<ApplyRunsData>> = [];
    for (let i = 0; i < changes.length; i += NOTIFY_BATCH) {
      const chunk = changes.slice(i, i + NOTIFY_BATCH);
      jobs.push({
        name: NAME,
        data: { runIds: chunk.map((c) => c.runId) },
        opts: { jobId: applyRunsJobId(chunk[0]!, chunk.length, suffix) },
      });
    }
    return jobs;
  },
  enqueueTimeoutMs: 1000,
  notTaken: 'enqueue failed; the reconciler will pick these runs up',
  items: 'runs',
};

/** The apply-runs queue of a process. */
export type RunJobs = KindQueue<ApplyRunsData, RunChange>;

/**
 * A job id that makes an accidental second enqueue of the same changes a no-op: named after the
 * first change (a run's change is committed, hence notified, in one batch only) and the count.
 */
export function applyRunsJobId(first: RunChange, count: number, suffix = ''): string {
  return `${first.runId}_${first.seq}_${count}${suffix}`;
}
