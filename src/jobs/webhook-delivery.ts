// Job kind "webhook delivery": an endpoint's turn (workers/processors/webhook-delivery.ts). Its
// job names only the endpoint; the worker takes from MySQL that endpoint's deliveries that are
// due, sends them, records every attempt and asks for the endpoint's next turn: now when more
// is due, else at the moment the earliest owed delivery falls due (src/webhooks/deliverer.ts).
// MySQL holds the deliveries, their attempts and when each is due; retries are turns made from
// next_attempt_at, not BullMQ's own retries, so the reconciler can always rebuild them.
//
// Two kinds of turn, with two kinds of deduplication id:
//   - a turn now (new deliveries dispatched, a redelivery, more due after a turn): at most one
//     waiting per endpoint (`hook:<endpoint>`), and one added while the endpoint's turn is
//     being worked is kept and queued once that turn ends (keepLastIfActive), so a delivery
//     made while a turn reads is never left for later;
//   - a turn at a time (a retry's backoff): one per endpoint and 100 ms slot
//     (`hook:<endpoint>@<slot>`), delayed to the slot's end, so the delivery is due when it
//     runs. A later timer never replaces an earlier one, and a timer never holds back a turn
//     now. Each turn asks only for the earliest, so an endpoint has few timers.
// Turns of one endpoint may overlap (a timer beside a turn now): each takes only deliveries
// no other turn holds, and only the first still owed of each run, so order per run holds.
import { retries, TRIM, type JobKind, type NewJob } from './job-kind.js';
import type { KindQueue } from './kind-queue.js';

export interface WebhookTurnData {
  endpointId: string;
}

/** A turn asked for: the endpoint's, now or at `at`. */
export interface EndpointTurn {
  endpointId: string;
  at?: Date | null;
}

const NAME = 'turn';

/** The timers' slot: a turn asked for at a time runs at the end of its slot. */
const TIMER_SLOT_MS = 100;

export const webhookDeliveryJob: JobKind<WebhookTurnData, EndpointTurn> = {
  queue: '{webhook-deliveries}',
  jobName: NAME,
  concurrency: (config) => config.webhooks.turns,
  options: (config) => ({
    // Only a failure of the service itself (MySQL away) is retried by BullMQ; the receiver's
    // failures are recorded in MySQL and scheduled from there.
    ...retries(config),
    removeOnComplete: true,
    removeOnFail: TRIM.removeOnFail,
  }),
  jobs: (turns, { now = Date.now() }) => {
    const jobs = new Map<string, NewJob<WebhookTurnData>>();
    for (const { endpointId, at } of turns) {
      const data = { endpointId };
      const due = at?.getTime() ?? now;
      if (due <= now) {
        const id = `hook:${endpointId}`;
        jobs.set(id, { name: NAME, data, opts: { deduplication: { id, keepLastIfActive: true } } });
        continue;
      }
      const slot = Math.ceil(due / TIMER_SLOT_MS);
      const id = `hook:${endpointId}@${slot}`;
      jobs.set(id, {
        name: NAME,
        data,
        opts: { deduplication: { id }, delay: slot * TIMER_SLOT_MS - now },
      });
    }
    return [...jobs.values()];
  },
  enqueueTimeoutMs: 2000,
  notTaken: 'webhook turns not enqueued; the reconciler will',
  items: 'endpoints',
};

/** The webhook-delivery queue of a process: the deliverer, dispatcher, reconciler and API add to it. */
export type DeliveryJobs = KindQueue<WebhookTurnData, EndpointTurn>;
