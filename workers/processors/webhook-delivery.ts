// Processor of "webhook delivery" jobs (src/jobs/webhook-delivery.ts): an endpoint's turn
// (src/webhooks/deliverer.ts). It throws only when the service itself failed (MySQL away),
// and BullMQ retries the turn; the receiver's failures are the deliveries', recorded and
// retried from MySQL. At shutdown a turn sends no more and lets go of what it did not send.
import type { Job } from 'bullmq';
import type { WebhookTurnData } from '../../src/jobs/webhook-delivery.js';
import type { Deliverer } from '../../src/webhooks/deliverer.js';

export function webhookDeliveryProcessor(deps: { deliverer: Deliverer; stopping: () => boolean }) {
  return async (job: Job<WebhookTurnData>) => {
    const endpointId = job.data?.endpointId;
    // A job of another shape (an older version's): the reconciler finds what it meant in MySQL.
    if (typeof endpointId !== 'string') return { attempted: 0 };
    return deps.deliverer.turn(endpointId, deps.stopping);
  };
}
