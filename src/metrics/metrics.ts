// The process's Prometheus metrics (prom-client): one registry per process, the default
// process metrics, and the service's own. Names and labels follow Prometheus conventions:
// `_total` counters, `_seconds` in base units, and no label whose values have no bound (never
// a run id or an organization id). Served only on METRICS_PORT (metrics/server.ts), never on
// the public API port.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RUN_EVENT_TYPES, type RunEventType } from '../runs/run-events.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpDuration = new Histogram({
  name: 'wrs_http_request_duration_seconds',
  help: 'Time from a request arriving to its answer, by route template, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [registry],
});

export const runsCreated = new Counter({
  name: 'wrs_runs_created_total',
  help: 'Runs created (committed).',
  registers: [registry],
});

export const changesApplied = new Counter({
  name: 'wrs_run_changes_total',
  help: 'Changes of runs committed, by type (create, start, complete_step, cancel, retry, clock, assign, migrate, fail, delete).',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const eventsWritten = new Counter({
  name: 'wrs_run_events_total',
  help: 'Run events committed with their changes, by event type.',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const reconcilerReenqueued = new Counter({
  name: 'wrs_reconciler_reenqueued_total',
  help: 'Turns the reconciler gave to organizations whose runs waited too long (a lost notification).',
  registers: [registry],
});

export const overdueMarkedByReconciler = new Counter({
  name: 'wrs_reconciler_overdue_marked_total',
  help: 'Steps the reconciler marked overdue because their timer was lost.',
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'wrs_webhook_attempts_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retry, failed, gone).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'wrs_webhook_attempt_duration_seconds',
  help: 'Time of one webhook delivery attempt, to the answer (or the timeout).',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const webhookTurnDeliveries = new Histogram({
  name: 'wrs_webhook_turn_deliveries',
  help: 'Deliveries one endpoint turn attempted (0: nothing was due, or another turn held it).',
  buckets: [0, 1, 4, 16, 64, 256, 1024],
  registers: [registry],
});

export const webhookDeliveriesMade = new Counter({
  name: 'wrs_webhook_deliveries_created_total',
  help: 'Deliveries made from committed events by the dispatcher (one per endpoint and event).',
  registers: [registry],
});

export const insightEventsFolded = new Counter({
  name: 'wrs_insights_events_folded_total',
  help: "Run events folded into the insights' rollups by this worker.",
  registers: [registry],
});

export const insightFoldLag = new Gauge({
  name: 'wrs_insights_fold_lag_events',
  help: "Events committed that the insights' fold had not reached at this worker's last pass.",
  registers: [registry],
});

export const webhookReenqueued = new Counter({
  name: 'wrs_reconciler_webhook_reenqueued_total',
  help: 'Endpoints owed webhook deliveries that the reconciler gave a turn (theirs was lost).',
  registers: [registry],
});

/** Gauges read when scraped: each asks its source then, so they are never stale. */
export function gauge(
  name: string,
  help: string,
  labelNames: readonly string[],
  collect: (set: (labels: Record<string, string>, value: number) => void) => Promise<void>,
): Gauge {
  return new Gauge({
    name,
    help,
    labelNames: labelNames as string[],
    registers: [registry],
    async collect() {
      this.reset();
      await collect((labels, value) => this.set(labels, value));
    },
  });
}

/** The kinds of change of a run, as the changes counter labels them. */
export const CHANGE_TYPES = [
  'create',
  'start',
  'complete_step',
  'cancel',
  'retry',
  'clock',
  'assign',
  'migrate',
  'fail',
  'delete',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

// Every label value exported from the start, at 0: a rate over a counter that appears only at
// its first increment misses that increment.
for (const type of CHANGE_TYPES) changesApplied.inc({ type }, 0);
for (const type of RUN_EVENT_TYPES) eventsWritten.inc({ type }, 0);

/** Counts one committed change of a run and the events it was written with. */
export function countChange(type: ChangeType, events: ReadonlyArray<{ type: RunEventType }>): void {
  changesApplied.inc({ type });
  for (const event of events) eventsWritten.inc({ type: event.type });
}
