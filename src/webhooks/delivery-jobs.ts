// Puts delivery jobs on the queue, after the commit that made them owed, at best: a job Redis
// does not take is found again by the reconciler (MySQL holds every delivery still owed).
import type { Queue } from 'bullmq';
import { webhookDeliveryJobId, type WebhookDeliveryData } from '../jobs/webhook-delivery.js';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import { addJobs } from '../queue.js';
import type { DeliveryRef } from './delivery-store.js';

export class DeliveryJobs {
  constructor(
    private readonly queue: Queue<WebhookDeliveryData>,
    private readonly log: Logger,
  ) {}

  /**
   * Enqueues an attempt of each delivery, at its next_attempt_at; false when Redis refused.
   * `suffix` sets a job apart from an earlier one of the same attempt that BullMQ still keeps
   * (a failed job stays for a week, and a job id is taken while it does).
   */
  async enqueue(
    deliveries: readonly DeliveryRef[],
    now = Date.now(),
    suffix = '',
  ): Promise<boolean> {
    if (deliveries.length === 0) return true;
    try {
      await withTimeout(
        addJobs(
          this.queue,
          deliveries.map((d) => ({
            name: 'deliver',
            data: { deliveryId: d.id },
            opts: {
              jobId: webhookDeliveryJobId(d) + suffix,
              delay: Math.max(0, (d.nextAttemptAt?.getTime() ?? now) - now),
            },
          })),
        ),
        2000,
        'enqueue webhook deliveries',
      );
      return true;
    } catch (err) {
      this.log.warn('webhook deliveries not enqueued; the reconciler will', {
        err,
        deliveries: deliveries.length,
      });
      return false;
    }
  }
}
