// Keeps the insights' rollups caught up with the run events, in every worker process: a pass
// every INSIGHTS_FOLD_INTERVAL_MS, within FOLD_WAKE_MS of any process's commit of events (the
// signal every commit sends through Redis), at once again while passes come back full. One
// worker folds at a time (the cursor's row, locked: the others skip their pass), so the figures
// trail the events by about one pass; a lost signal costs at most the interval. A worker that
// is applying runs puts its fold second: it waits, then takes a bounded share of the time.
//
// Only ids the process's EventWatermark has decided are folded (every id up to it committed or
// never to be): transactions commit out of id order, and a cursor moved past an id still in
// flight would never fold that event.
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import { insightEventsFolded, insightFoldLag } from '../metrics/metrics.js';
import { EventWatermark } from '../streams/event-watermark.js';
import type { StreamStore } from '../streams/stream-store.js';
import type { InsightStore } from './insight-store.js';

/**
 * Events folded per transaction: few while this worker applies runs (a batch is some
 * milliseconds of JavaScript and a transaction beside theirs), many when it does not (a
 * backlog is caught up with in fewer, larger transactions).
 */
const BUSY_BATCH = 250;
const IDLE_BATCH = 2000;
/** While runs are being applied, how often the fold looks again whether they are done. */
const BUSY_RECHECK_MS = 200;
/** Signals this close together share one pass: the fold works in batches, not per commit. */
export const FOLD_WAKE_MS = 100;

export class InsightFolder {
  private readonly loop: Periodic;
  private readonly watermark: EventWatermark;

  /** When the fold last caught up (or started). */
  private caughtUpAt = Date.now();
  /** While runs are being applied, no pass before this (the pause that keeps the share). */
  private pausedUntil = 0;

  constructor(
    private readonly store: Pick<InsightStore, 'fold' | 'cursor'>,
    events: StreamStore,
    gapGraceMs: number,
    intervalMs: number,
    log: Logger,
    /**
     * Whether this worker is applying runs now, and how the fold gives way to that: the figures
     * may wait, a run's next step should not. It waits up to `deferMs` (a burst shorter than
     * that pays nothing); past that it folds, in small batches, for at most `share` of the time
     * (each pass is followed by a pause of (1 − share) / share times its length). At that share
     * a backlog is caught up with at a share of the fold's full speed; the figures trail by the
     * wait and that catch-up (docs/insights.md#freshness).
     */
    private readonly yieldTo: { busy: () => boolean; deferMs: number; share: number } = {
      busy: () => false,
      deferMs: 0,
      share: 1,
    },
  ) {
    this.watermark = new EventWatermark(events, gapGraceMs, Date.now, () => store.cursor());
    this.loop = new Periodic(() => this.foldOnce(), {
      intervalMs,
      onError: (err) => log.warn('insights fold pass failed', { err }),
    });
  }

  /**
   * The first pass after an interval, not at once: a worker starting beside a backlog of runs
   * takes its first jobs first, and then its fold waits for them (a backlog of events folded
   * first, at full speed, came before the runs).
   */
  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Some process committed events. */
  signalled(): void {
    this.loop.wake(FOLD_WAKE_MS);
  }

  /** Folds until caught up with the watermark; returns how many events were folded. */
  async foldOnce(now = () => new Date()): Promise<number> {
    let folded = 0;
    for (;;) {
      const busy = this.yieldTo.busy();
      if (busy) {
        const wait =
          Date.now() - this.caughtUpAt < this.yieldTo.deferMs
            ? BUSY_RECHECK_MS
            : this.pausedUntil - Date.now();
        if (wait > 0) {
          this.loop.wake(wait);
          return folded;
        }
      }
      const started = Date.now();
      const advance = await this.watermark.advance();
      const pass = await this.store.fold(advance.mark, busy ? BUSY_BATCH : IDLE_BATCH, now());
      folded += pass.events;
      insightEventsFolded.inc(pass.events);
      const ended = Date.now();
      if (busy) {
        const share = this.yieldTo.share;
        this.pausedUntil = ended + Math.ceil(((ended - started) * (1 - share)) / share);
      }
      // Another worker holds the cursor: the pass is its.
      if (!pass.held || this.loop.stopping) return folded;
      // Ids decided and not folded yet (a backlog being caught up with; 0 once caught up).
      insightFoldLag.set(Math.max(0, advance.mark - pass.cursor));
      if (pass.cursor >= advance.mark) {
        this.caughtUpAt = ended;
        // A gap still in its grace holds the watermark back: look again once it is decided.
        if (advance.retryInMs !== undefined) this.loop.wake(advance.retryInMs);
        return folded;
      }
    }
  }
}
