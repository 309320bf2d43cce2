// Processor of "schedules due" jobs (src/jobs/schedule-tick.ts): sweeps every schedule whose
// wake time came (src/schedules/schedule-runner.ts); the sweep sets the next timers itself.
import type { Job } from 'bullmq';
import type { ScheduleTickData } from '../../src/jobs/schedule-tick.js';
import type { ScheduleRunner } from '../../src/schedules/schedule-runner.js';

export function scheduleTickProcessor(deps: { runner: ScheduleRunner }) {
  return async (_job: Job<ScheduleTickData>) => {
    // Everything owed by now, not only by the job's second: a late job catches up.
    return { fired: await deps.runner.sweepAll(new Date()) };
  };
}
