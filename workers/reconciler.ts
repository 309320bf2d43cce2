// Makes up for what Redis may have lost (a restart, FLUSHALL) or a process that died between
// its commit and its enqueue; MySQL says what is owed:
//   - organizations with a run whose stored change has waited longer than it should are given
//     a turn (src/jobs/apply-runs.ts; safe in every worker at once: an organization has one
//     turn queued at most, and applying is idempotent). Turns take the oldest owed runs, round
//     robin between organizations, so after a flush a backlog in one organization holds up no
//     other either;
//   - current steps whose wake time passed (overdue, an escalation, an approval's timeout: their
//     timer lost) get what the clock owes them here;
//   - endpoints owed a delivery that has been due for a while, held by no turn and first of
//     its run to the endpoint, are given a turn (an endpoint has one turn queued at most, and a
//     turn claims what it sends, so a doubled turn sends nothing twice);
//   - expired Idempotency-Keys are deleted;
//   - API keys past their expiry are recorded in the audit log, once each (api_key.expired);
//   - running bulk actions are offered a job (a no-op while one is queued or worked);
//   - schedules whose wake time passed a while ago (their timer lost) are swept.
import type { RunJobs } from '../src/jobs/apply-runs.js';
import type { BulkStore } from '../src/bulk/bulk-store.js';
import type { BulkActionJobs } from '../src/jobs/bulk-action.js';
import type { DeliveryJobs } from '../src/jobs/webhook-delivery.js';
import { Periodic } from '../src/lib/periodic.js';
import type { Logger } from '../src/logger.js';
import { overdueMarkedByReconciler, reconcilerReenqueued } from '../src/metrics/metrics.js';
import type { IdempotencyStore } from '../src/idempotency/idempotency-keys.js';
import type { KeyStore } from '../src/auth/key-store.js';
import { wakeDueSteps, type DueTimers } from '../src/runs/due-timers.js';
import type { RunStore } from '../src/runs/run-store.js';
import type { DeliveryStore } from '../src/webhooks/delivery-store.js';
import { webhookReenqueued } from '../src/metrics/metrics.js';

/** What the reconciler sweeps. */
export interface ReconcilerSweeps {
  /** timers: where the next wake times of the steps it changed are scheduled. */
  runs: { store: RunStore; jobs: RunJobs; timers?: Pick<DueTimers, 'schedule'> };
  idempotencyKeys: IdempotencyStore;
  deliveries: { store: DeliveryStore; jobs: DeliveryJobs };
  apiKeys: Pick<KeyStore, 'recordExpiries'>;
  bulkActions: { store: Pick<BulkStore, 'running'>; jobs: BulkActionJobs };
  /** The schedules: when the earliest is owed a look, and the sweep that fires what is owed. */
  schedules?: { nextWake(): Promise<Date | undefined>; sweepAll(now?: Date): Promise<number> };
}

export class Reconciler {
  private readonly loop: Periodic;

  private readonly store: RunStore;
  private readonly runJobs: RunJobs;
  private readonly timers: Pick<DueTimers, 'schedule'> | undefined;
  private readonly keys: IdempotencyStore;
  private readonly webhooks: { store: DeliveryStore; jobs: DeliveryJobs };
  private readonly apiKeys: Pick<KeyStore, 'recordExpiries'>;
  private readonly bulkActions: { store: Pick<BulkStore, 'running'>; jobs: BulkActionJobs };
  private readonly schedules: ReconcilerSweeps['schedules'];

  constructor(
    /** What it sweeps: each store MySQL answers from, and the queue it enqueues on. */
    sweeps: ReconcilerSweeps,
    private readonly options: { intervalMs: number; afterMs: number; batch?: number },
    private readonly log: Logger,
  ) {
    this.store = sweeps.runs.store;
    this.runJobs = sweeps.runs.jobs;
    this.timers = sweeps.runs.timers;
    this.keys = sweeps.idempotencyKeys;
    this.webhooks = sweeps.deliveries;
    this.apiKeys = sweeps.apiKeys;
    this.bulkActions = sweeps.bulkActions;
    this.schedules = sweeps.schedules;
    this.loop = new Periodic(() => this.reconcileOnce(), {
      intervalMs: options.intervalMs,
      onError: (err) => log.warn('reconcile pass failed', { err }),
    });
  }

  /** The first pass comes after an interval: at start nothing has waited long enough yet. */
  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass; returns how many runs were enqueued again or had a step marked overdue. */
  async reconcileOnce(): Promise<number> {
    const done =
      (await this.reenqueueUnapplied()) +
      (await this.markPastDue()) +
      (await this.reenqueueDeliveries()) +
      (await this.fireLateSchedules());
    await this.keys.deleteExpired();
    await this.recordKeyExpiries();
    await this.offerBulkActions();
    return done;
  }

  /**
   * A job for every running bulk action: deduplicated by the action's id, so this adds one only
   * where Redis has none (lost, or its worker stopped between batches).
   */
  private async offerBulkActions(): Promise<void> {
    const running = await this.bulkActions.store.running(this.options.batch ?? 1000);
    if (running.length > 0) await this.bulkActions.jobs.enqueue(running);
  }

  /** Schedules owed a look more than afterMs ago (their timer lost): swept, as a timer would. */
  private async fireLateSchedules(): Promise<number> {
    if (!this.schedules) return 0;
    const wake = await this.schedules.nextWake();
    if (!wake || wake.getTime() > Date.now() - this.options.afterMs) return 0;
    const fired = await this.schedules.sweepAll(new Date());
    if (fired > 0) this.log.info('fired schedules whose timers were lost', { runs: fired });
    return fired;
  }

  /** Keys past their expiry, recorded once each; a few bounded batches a pass. */
  private async recordKeyExpiries(): Promise<number> {
    const batch = this.options.batch ?? 1000;
    let recorded = 0;
    for (let round = 0; round < 10; round++) {
      const n = await this.apiKeys.recordExpiries(new Date(), batch);
      recorded += n;
      if (n < batch) break;
    }
    if (recorded > 0) this.log.info('recorded expired API keys', { keys: recorded });
    return recorded;
  }

  /** Steps whose wake time passed more than afterMs ago (their timer had its chance). */
  private async markPastDue(): Promise<number> {
    const changed = await wakeDueSteps(
      this.store,
      new Date(Date.now() - this.options.afterMs),
      this.options.batch ?? 1000,
    );
    await this.timers?.schedule(changed);
    overdueMarkedByReconciler.inc(changed.length);
    if (changed.length > 0) {
      this.log.info('gave steps what the clock owed them after their timers were lost', {
        runs: changed.length,
      });
    }
    return changed.length;
  }

  /** Endpoints owed deliveries due more than afterMs ago: their turn was lost, or never made. */
  private async reenqueueDeliveries(): Promise<number> {
    const now = Date.now();
    const endpoints = await this.webhooks.store.endpointsOwed(
      new Date(now - this.options.afterMs),
      new Date(now),
      this.options.batch ?? 1000,
    );
    if (endpoints.length === 0) return 0;
    // A turn now each; an endpoint whose turn still waits gets no second one.
    const sent = await this.webhooks.jobs.enqueue(endpoints.map((endpointId) => ({ endpointId })));
    if (!sent) return 0;
    webhookReenqueued.inc(endpoints.length);
    this.log.info('gave a turn to endpoints owed webhook deliveries', {
      endpoints: endpoints.length,
    });
    return endpoints.length;
  }

  private async reenqueueUnapplied(): Promise<number> {
    const organizations = await this.store.organizationsOwed(
      new Date(Date.now() - this.options.afterMs),
      this.options.batch ?? 1000,
    );
    if (organizations.length === 0) return 0;
    const sent = await this.runJobs.enqueue(organizations);
    if (!sent) return 0;
    reconcilerReenqueued.inc(organizations.length);
    this.log.info('gave a turn to organizations whose runs wait', {
      organizations: organizations.length,
    });
    return organizations.length;
  }
}
