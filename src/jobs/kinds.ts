// Every kind of job, in one place. Processes open their queues from this list (process-queues.ts),
// a worker starts one BullMQ worker per kind with the kind's own concurrency and needs a
// processor for each (Processors: the compiler names a missing one), and the wrs_jobs gauges
// and the operators' board show every kind listed here. A new kind: its file beside this one,
// a line here, and its processor in workers/processors/.
import type { Processor } from 'bullmq';
import { applyRunsJob } from './apply-runs.js';
import { bulkActionJob } from './bulk-action.js';
import type { JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';
import { runRetentionJob } from './run-retention.js';
import { scheduleTickJob } from './schedule-tick.js';
import { stepDueJob } from './step-due.js';
import { webhookDeliveryJob } from './webhook-delivery.js';

export const JOB_KINDS = {
  applyRuns: applyRunsJob,
  stepDue: stepDueJob,
  webhookDelivery: webhookDeliveryJob,
  bulkAction: bulkActionJob,
  runRetention: runRetentionJob,
  scheduleTick: scheduleTickJob,
} as const;

export type JobKindName = keyof typeof JOB_KINDS;

/** The names, in the list's order. */
export const JOB_KIND_NAMES = Object.keys(JOB_KINDS) as JobKindName[];

type Kind<K extends JobKindName> = (typeof JOB_KINDS)[K];

/** Each kind's queue in a process, typed by what its jobs carry and what callers enqueue. */
export type KindQueues = {
  [K in JobKindName]: Kind<K> extends JobKind<infer D, infer I> ? KindQueue<D, I> : never;
};

/** A processor for every kind, each taking its own kind's jobs. */
export type Processors = {
  [K in JobKindName]: Kind<K> extends JobKind<infer D, never> ? Processor<D> : never;
};
