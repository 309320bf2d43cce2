// Every kind of job the workers serve, in one place. A worker process starts one BullMQ worker
// per kind listed here, with the kind's own concurrency (workers/main.ts).
import { applyRunsJob } from './apply-runs.js';
import type { JobKind } from './job-kind.js';
import { stepDueJob } from './step-due.js';
import { webhookDeliveryJob } from './webhook-delivery.js';

export const JOB_KINDS = {
  applyRuns: applyRunsJob,
  stepDue: stepDueJob,
  webhookDelivery: webhookDeliveryJob,
} as const;

export type JobKindName = keyof typeof JOB_KINDS;

/** The data type of a kind. */
export type DataOf<K> = K extends JobKind<infer D> ? D : never;
