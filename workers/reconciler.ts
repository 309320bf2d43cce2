// Finds runs whose stored change has waited longer than it should and enqueues them again.
// MySQL says what is owed; Redis may have lost the job (a restart, FLUSHALL), or a process may
// have died between its commit and its enqueue. Safe in every worker at once: the job ids of
// one round are the same in every process, so BullMQ keeps one, and applying is idempotent.
import type { Logger } from '../src/logger.js';
import type { RunNotifier } from '../src/runs/run-notifier.js';
import type { RunStore } from '../src/runs/run-store.js';

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: RunStore,
    private readonly notifier: RunNotifier,
    private readonly options: { intervalMs: number; afterMs: number; batch?: number },
    private readonly log: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass; returns how many runs were enqueued again. */
  async reconcileOnce(): Promise<number> {
    const now = Date.now();
    const overdue = await this.store.findOverdue(
      new Date(now - this.options.afterMs),
      this.options.batch ?? 1000,
    );
    if (overdue.length === 0) return 0;
    const round = Math.floor(now / this.options.afterMs);
    const sent = await this.notifier.notify(
      overdue.map((r) => ({ runId: r.id, seq: Number(r.requested_seq) })),
      `_r${round}`,
    );
    if (sent) this.log.info('re-enqueued overdue runs', { runs: overdue.length });
    return sent ? overdue.length : 0;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.reconcileOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn('reconcile pass failed', { err }))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.options.intervalMs);
  }
}
