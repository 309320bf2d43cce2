// Job kind "step due": at a step's due date, mark it overdue if it is still the run's current
// step (workers/processors/step-due.ts). A delayed job; completing or cancelling first makes it
// a no-op, and the reconciler marks a step whose job Redis lost.
import type { Config } from '../config.js';
import { TRIM, type JobKind } from './job-kind.js';

export interface StepDueData {
  runId: string;
  /** Index of the step that was current when the job was scheduled. */
  step: number;
}

export const stepDueJob: JobKind<StepDueData> = {
  queue: 'step-due',
  concurrency: () => 16,
  options: (config: Config) => ({
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
    ...TRIM,
  }),
};

/** One timer per run and step: scheduling it twice adds one job. */
export function stepDueJobId(data: StepDueData): string {
  return `due_${data.runId}_${data.step}`;
}
