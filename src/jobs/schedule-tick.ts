// Job kind "schedules due": at a second in which schedules owe a firing, a worker sweeps every
// schedule whose wake time came (workers/processors/schedule-tick.ts, src/schedules/). Like the
// steps' timers, one delayed job per second (its id the second), whatever number of schedules
// fall due in it. MySQL holds each schedule's next time; a tick lost with Redis is made up for
// by the reconciler, which runs the same sweep.
import { retries, TRIM, type JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface ScheduleTickData {
  /** The end of the second the job is for (ms since the epoch): it fires then. */
  dueAt: number;
}

const NAME = 'schedules-due';

export const scheduleTickJob: JobKind<ScheduleTickData, number> = {
  queue: '{schedule-ticks}',
  jobName: NAME,
  concurrency: () => 2,
  options: (config) => ({ ...retries(config), ...TRIM }),
  jobs: (dueAts, { now = Date.now() }) =>
    dueAts.map((dueAt) => ({
      name: NAME,
      data: { dueAt },
      opts: { jobId: `tick_${dueAt}`, delay: Math.max(0, dueAt - now) },
    })),
  enqueueTimeoutMs: 1000,
  notTaken: 'schedule timers not set; the reconciler will fire these schedules',
  items: 'timers',
};

/** The schedule-tick queue of a process. */
export type ScheduleTickJobs = KindQueue<ScheduleTickData, number>;
