// Job kind "webhook delivery": make the next attempt of one delivery (workers/processors/
// webhook-delivery.ts). MySQL holds the delivery, its attempts and when the next is due; the
// job only says which one. Retries are new delayed jobs made from MySQL's next_attempt_at, not
// BullMQ's own retries, so the reconciler can always rebuild them; a job id names the delivery,
// its round and its attempt, so the same attempt is never queued twice at once.
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
    // Removed once done, so the same id can be queued again for a later nudge.
    removeOnComplete: true,
    removeOnFail: TRIM.removeOnFail,
  }),
  // Each at its next_attempt_at. The suffix is the reconciler's round or an operator's "now".
  jobs: (deliveries, { suffix = '', now = Date.now() }) =>
    deliveries.map((d) => ({
      name: NAME,
      data: { deliveryId: d.id },
      opts: {
        jobId: webhookDeliveryJobId(d) + suffix,
        delay: Math.max(0, (d.nextAttemptAt?.getTime() ?? now) - now),
      },
    })),
  enqueueTimeoutMs: 2000,
  notTaken: 'webhook deliveries not enqueued; the reconciler will',
  items: 'deliveries',
};

/** The webhook-delivery queue of a process: the deliverer, dispatcher and reconciler add to it. */
export type DeliveryJobs = KindQueue<WebhookDeliveryData, DeliveryRef>;

export function webhookDeliveryJobId(d: { id: string; round: number; attempts: number }): string {
  return `wh_${d.id}_${d.round}_${d.attempts}`;
}
