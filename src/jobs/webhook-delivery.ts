// Job kind "webhook delivery": make the next attempt of one delivery (workers/processors/
// webhook-delivery.ts). MySQL holds the delivery, its attempts and when the next is due; the
// job only says which one. Retries are new delayed jobs made from MySQL's next_attempt_at, not
// BullMQ's own retries, so the reconciler can always rebuild them.
//
// At most one job per attempt (the delivery, its round and its attempt) is in Redis at a time:
// BullMQ deduplication by that name. So the reconciler, which enqueues every delivery owed for a
// while, adds nothing for one whose job still waits; with a job id per reconciler round instead,
// a backlog after a Redis failover filled the queue with copies, and each run's next delivery
// queued behind all of them (deliveries all but stopped). An attempt added while its job is
// being worked is kept and queued once that job ends (keepLastIfActive: a nudge that comes
// early); one added while its job waits out a delay replaces it (replace: an operator's
// redeliver now). The key goes when the job completes or fails, and BullMQ drops a key whose
// job was lost.
import type { DeliveryRef } from '../webhooks/delivery-store.js';
import { retries, TRIM, type JobKind } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface WebhookDeliveryData {
  deliveryId: string;
}

const NAME = 'deliver';

export const webhookDeliveryJob: JobKind<WebhookDeliveryData, DeliveryRef> = {
  queue: '{webhook-deliveries}',
  jobName: NAME,
  concurrency: (config) => config.webhooks.concurrency,
  options: (config) => ({
    // Only a failure of the service itself (MySQL away) is retried by BullMQ; the receiver's
    // failures are recorded in MySQL and scheduled from there.
    ...retries(config),
    removeOnComplete: true,
    removeOnFail: TRIM.removeOnFail,
  }),
  // Each at its next_attempt_at; the job id is BullMQ's own.
  jobs: (deliveries, { now = Date.now() }) =>
    deliveries.map((d) => ({
      name: NAME,
      data: { deliveryId: d.id },
      opts: {
        deduplication: { id: deliveryAttemptKey(d), keepLastIfActive: true, replace: true },
        delay: Math.max(0, (d.nextAttemptAt?.getTime() ?? now) - now),
      },
    })),
  enqueueTimeoutMs: 2000,
  notTaken: 'webhook deliveries not enqueued; the reconciler will',
  items: 'deliveries',
};

/** The webhook-delivery queue of a process: the deliverer, dispatcher and reconciler add to it. */
export type DeliveryJobs = KindQueue<WebhookDeliveryData, DeliveryRef>;

/** Names one attempt of one delivery: the deduplication id of its job. */
export function deliveryAttemptKey(d: { id: string; round: number; attempts: number }): string {
  return `wh_${d.id}_${d.round}_${d.attempts}`;
}
