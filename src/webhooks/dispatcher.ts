// Turns committed run events into webhook deliveries (the outbox's relay), in every worker
// process: a pass every WEBHOOK_DISPATCH_INTERVAL_MS, at once again while passes come back
// full, and at once when this worker has just committed changes (wake), as long as any
// endpoint exists (so a service nobody subscribed to pays nothing per change). Passes in several workers share the work (events are locked as they are taken, and
// skipped when another holds them). The first delivery of each run to each endpoint is
// enqueued after the commit; the next ones follow it in order (deliverer.ts).
import type { DeliveryJobs } from '../jobs/webhook-delivery.js';
import type { Logger } from '../logger.js';
import { webhookDeliveriesMade } from '../metrics/metrics.js';
import type { OutboxStore } from './outbox-store.js';

const BATCH = 1000;

export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** A wake came while a pass ran: another pass follows it at once. */
  private again = false;
  /** Whether the last pass found any endpoint. */
  private subscribed = false;

  constructor(
    private readonly store: OutboxStore,
    private readonly jobs: DeliveryJobs,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** This worker committed events: dispatch now rather than at the next interval. */
  wake(): void {
    if (this.stopped || !this.subscribed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** Dispatches until nothing is left; returns how many deliveries were made. */
  async dispatchOnce(now = () => new Date()): Promise<number> {
    let made = 0;
    for (;;) {
      const pass = await this.store.dispatch(BATCH, now());
      this.subscribed = pass.subscribed;
      made += pass.made;
      webhookDeliveriesMade.inc(pass.made);
      await this.jobs.enqueue(pass.first);
      if (pass.events < BATCH || this.stopped) return made;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.dispatchOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn('webhook dispatch pass failed', { err }))
        .finally(() => {
          this.running = undefined;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.intervalMs);
        });
    }, delayMs);
  }
}
