// Processor of "step due" jobs (src/jobs/step-due.ts): marks the step overdue if it is still
// the run's current step; a no-op when it was completed or the run cancelled first.
import type { Job } from 'bullmq';
import type { StepDueData } from '../../src/jobs/step-due.js';
import { markStepOverdue } from '../../src/runs/due-timers.js';
import type { RunStore } from '../../src/runs/run-store.js';

export function stepDueProcessor(deps: { store: RunStore }) {
  return async (job: Job<StepDueData>) => {
    const { runId, step } = job.data ?? {};
    if (typeof runId !== 'string' || typeof step !== 'number') return { marked: false };
    return { marked: await markStepOverdue(deps.store, runId, step) };
  };
}
