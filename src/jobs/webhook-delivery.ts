// Job kind "webhook delivery": make the next attempt of one delivery (workers/processors/
// webhook-delivery.ts). MySQL holds the delivery, its attempts and when the next is due; the
// job only says which one. Retries are new delayed jobs made from MySQL's next_attempt_at, not
// BullMQ's own retries, so the reconciler can always rebuild them; a job id names the delivery,
// its round and its attempt, so the same attempt is never queued twice at once.
import type { Config } from '../config.js';
import { TRIM, type JobKind } from './job-kind.js';

export interface WebhookDeliveryData {
  deliveryId: string;
}

export const webhookDeliveryJob: JobKind<WebhookDeliveryData> = {
  queue: '{webhook-deliveries}',
  concurrency: (config: Config) => config.webhooks.concurrency,
  options: (config: Config) => ({
    // Only a failure of the service itself (MySQL away) is retried by BullMQ; the receiver's
    // failures are recorded in MySQL and scheduled from there.
    attempts: config.jobAttempts,
    backoff: { type: 'exponential', delay: config.jobBackoffMs },
    // Removed once done, so the same id can be queued again for a later nudge.
    removeOnComplete: true,
    removeOnFail: TRIM.removeOnFail,
  }),
};

export function webhookDeliveryJobId(d: { id: string; round: number; attempts: number }): string {
  return `wh_${d.id}_${d.round}_${d.attempts}`;
}
