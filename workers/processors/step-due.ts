// Processor of "steps due" jobs (src/jobs/step-due.ts): marks every step that is past its due
// date and still current as overdue; a step completed or a run cancelled first is left alone.
import type { Job } from 'bullmq';
import type { StepDueData } from '../../src/jobs/step-due.js';
import { markPastDueSteps } from '../../src/runs/due-timers.js';
import type { RunStore } from '../../src/runs/run-store.js';

export function stepDueProcessor(deps: { store: RunStore }) {
  return async (_job: Job<StepDueData>) => {
    // Everything due by now, not only by the job's second: a late job catches up.
    return { marked: await markPastDueSteps(deps.store, new Date()) };
  };
}
