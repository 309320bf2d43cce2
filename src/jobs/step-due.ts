// Job kind "steps due": at a moment when steps fall due, mark every step that is past its due
// date and still current as overdue (workers/processors/step-due.ts). Timers are kept per
// second, not per run: the runs that fall due in the same second share one delayed job, so a
// batch of runs started together costs one or two jobs, not one each. Completing a step or
// cancelling a run first leaves nothing to mark, and the reconciler marks what a lost timer owed.
// src/runs/due-timers.ts decides which seconds need a timer.
import { retries, TRIM, type JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface StepDueData {
  /** The end of the second the job is for (ms since the epoch): it fires then. */
  dueAt: number;
}

const NAME = 'steps-due';

/** An item is the second's firing time (dueBucket); the job is delayed until then. */
export const stepDueJob: JobKind<StepDueData, number> = {
  queue: '{step-due}',
  jobName: NAME,
  concurrency: () => 4,
  options: (config) => ({ ...retries(config), ...TRIM }),
  jobs: (dueAts, { now = Date.now() }) =>
    dueAts.map((dueAt) => ({
      name: NAME,
      data: { dueAt },
      opts: { jobId: stepDueJobId({ dueAt }), delay: Math.max(0, dueAt - now) },
    })),
  enqueueTimeoutMs: 1000,
  notTaken: 'due timers not scheduled; the reconciler will mark these steps',
  items: 'timers',
};

/** The step-due queue of a process. */
export type StepDueJobs = KindQueue<StepDueData, number>;

/** The second a due date falls in, as the time the job for it fires (its end). */
export { secondBucket as dueBucket } from './second-timers.js';

/** One timer per second: scheduling it again adds nothing. */
export function stepDueJobId(data: StepDueData): string {
  return `due_${data.dueAt}`;
}
