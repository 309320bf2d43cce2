// Job kind "steps due": at a moment when steps fall due, mark every step that is past its due
// date and still current as overdue (workers/processors/step-due.ts). Timers are kept per
// second, not per run: the runs that fall due in the same second share one delayed job, so a
// batch of runs started together costs one or two jobs, not one each. Completing a step or
// cancelling a run first leaves nothing to mark, and the reconciler marks what a lost timer owed.
import type { Config } from '../config.js';
import { TRIM, type JobKind } from './job-kind.js';

export interface StepDueData {
  /** The end of the second the job is for (ms since the epoch): it fires then. */
  dueAt: number;
}

export const stepDueJob: JobKind<StepDueData> = {
  queue: '{step-due}',
  concurrency: () => 4,
  options: (config: Config) => ({
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
    ...TRIM,
  }),
};

/** The second a due date falls in, as the time the job for it fires (its end). */
export function dueBucket(dueDate: Date): number {
  return Math.ceil(dueDate.getTime() / 1000) * 1000;
}

/** One timer per second: scheduling it again adds nothing. */
export function stepDueJobId(data: StepDueData): string {
  return `due_${data.dueAt}`;
}
