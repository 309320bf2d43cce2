// Turns committed run events into webhook deliveries (the outbox's relay), in every worker
// process: a pass every WEBHOOK_DISPATCH_INTERVAL_MS, at once again while passes come back
// full, at once when this worker has just committed events (wake), and within SIGNAL_WAKE_MS
// when any process has (signalled: the wake-up every commit of events sends through Redis,
// src/streams/event-signal.ts), as long as any endpoint exists (so a service nobody
// subscribed to pays nothing per change). The interval is what a lost signal costs at most.
// Passes in several workers share the work (events are locked as they are taken, and skipped
// when another holds them). Each endpoint given deliveries is owed a turn, asked for after
// the commit (deliverer.ts).
import type { DeliveryJobs } from '../jobs/webhook-delivery.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import { webhookDeliveriesMade } from '../metrics/metrics.js';
import type { OutboxStore } from './outbox-store.js';

const BATCH = 1000;

/**
 * How soon a signal from any process is followed by a pass. Every worker hears every
 * process's commits, and under load they come 150 or more a second: the signals of this long
 * share one pass, so a worker makes at most some 100 passes a second for them (only one of
 * the workers finds the events), while an event the API committed still goes out within
 * milliseconds.
 */
export const SIGNAL_WAKE_MS = 10;

export class Dispatcher {
  private readonly loop: Periodic;
  /**
   * Whether the last pass found any endpoint. Assumed until the first pass has ended: a wake
   * that comes while it runs (this worker's first commits) is not dropped, but followed by a
   * pass (else those events waited for the interval).
   */
  private subscribed = true;

  constructor(
    private readonly store: Pick<OutboxStore, 'dispatch'>,
    private readonly jobs: Pick<DeliveryJobs, 'enqueue'>,
    intervalMs: number,
    log: Logger,
  ) {
    this.loop = new Periodic(() => this.dispatchOnce(), {
      intervalMs,
      onError: (err) => log.warn('webhook dispatch pass failed', { err }),
    });
  }

  start(): void {
    this.loop.start(0);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** This worker committed events: dispatch now rather than at the next interval. */
  wake(): void {
    if (this.subscribed) this.loop.wake();
  }

  /** Some process committed events (a signal through Redis): dispatch within SIGNAL_WAKE_MS. */
  signalled(): void {
    if (this.subscribed) this.loop.wake(SIGNAL_WAKE_MS);
  }

  /** Dispatches until nothing is left; returns how many deliveries were made. */
  async dispatchOnce(now = () => new Date()): Promise<number> {
    let made = 0;
    for (;;) {
      const pass = await this.store.dispatch(BATCH, now());
      this.subscribed = pass.subscribed;
      made += pass.made;
      webhookDeliveriesMade.inc(pass.made);
      await this.jobs.enqueue(pass.endpoints.map((endpointId) => ({ endpointId })));
      if (pass.events < BATCH || this.loop.stopping) return made;
    }
  }
}
