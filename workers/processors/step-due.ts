// Processor of "steps due" jobs (src/jobs/step-due.ts): gives every current step whose wake
// time came what the clock owes it (overdue, escalations, an approval's timeout), then
// schedules the changed steps' next wake times; a step completed or a run cancelled first is
// left alone.
import type { Job } from 'bullmq';
import type { StepDueData } from '../../src/jobs/step-due.js';
import { wakeDueSteps, type DueTimers } from '../../src/runs/due-timers.js';
import type { RunStore } from '../../src/runs/run-store.js';

export function stepDueProcessor(deps: { store: RunStore; dueTimers: DueTimers }) {
  return async (_job: Job<StepDueData>) => {
    // Everything due by now, not only by the job's second: a late job catches up.
    const changed = await wakeDueSteps(deps.store, new Date());
    await deps.dueTimers.schedule(changed);
    return { changed: changed.length };
  };
}
