// Processor of "webhook delivery" jobs (src/jobs/webhook-delivery.ts): one attempt of one
// delivery (src/webhooks/deliverer.ts). It throws only when the service itself failed (MySQL
// away); the receiver's failures are the delivery's, recorded and retried from MySQL.
import type { Job } from 'bullmq';
import type { WebhookDeliveryData } from '../../src/jobs/webhook-delivery.js';
import type { Deliverer } from '../../src/webhooks/deliverer.js';

export function webhookDeliveryProcessor(deps: { deliverer: Deliverer }) {
  return async (job: Job<WebhookDeliveryData>) => {
    const id = typeof job.data?.deliveryId === 'string' ? job.data.deliveryId : undefined;
    if (!id) return { outcome: 'not_owed' };
    return { outcome: await deps.deliverer.attempt(id) };
  };
}
