// The process's safe watermark over run_events.id: the highest id W such that every id up to
// W is committed or will never be. A stream sends its organization's events with ids in
// (its cursor, W], in id order, and then moves its cursor to W: so it sends every event once,
// and never one before an earlier id that might still commit.
//
// Why a watermark: ids are taken at INSERT, and transactions commit in any order, so a reader
// of "id > cursor" could see id 12 committed while 11 is still in flight, move past 11, and
// never send it. The watermark moves over contiguous committed ids only. A missing id (a gap
// below a committed one) is either in flight, rolled back, or never used (InnoDB reserves ids
// for an INSERT … SELECT that it may not use). A gap is decided so:
//   1. it stays open for STREAM_GAP_GRACE_MS after it was first seen (an id is taken a moment
//      before its row is in the index; the grace covers that moment many times over);
//   2. then a locking read of the gap (StreamStore.probe, READ COMMITTED) waits for every row
//      inserted there and not yet committed or rolled back, bounded by the longest a writer's
//      transaction may stay open (WRITE_TIMEOUT_MS; a probe that times out is tried again);
//   3. when it returns, every id of the gap is committed (and read by the streams, being at or
//      below the new W) or gone for good, and W moves past the gap.
// Only the ids seen when the gap was found are decided by its probe: later ones get their own.
import type { IdGap, StreamStore } from './stream-store.js';

/** Ids read per query while moving the watermark. */
const SCAN_LIMIT = 10_000;
/**
 * Where a process starts: this many ids below the newest committed one are taken as decided
 * (a writer's transaction lives at most WRITE_TIMEOUT_MS: 200,000 ids in 5 s would be 40,000
 * events a second, far beyond what this service writes); those above are walked and probed.
 */
const START_LOOKBACK = 200_000;

interface PendingProbe {
  gaps: IdGap[];
  /** The highest id seen when the gaps were found: W once they are decided. */
  upTo: number;
  /** When the probe may run (first seen + grace). */
  at: number;
}

export interface AdvanceResult {
  /** The watermark now. */
  mark: number;
  /** True when no gap holds the watermark back: every id committed so far is at most `mark`. */
  caughtUp: boolean;
  /** When a gap waits for its grace: how long until advancing again may decide it. */
  retryInMs?: number;
}

export class EventWatermark {
  private mark: number | undefined;
  private pending: PendingProbe | undefined;

  constructor(
    private readonly store: StreamStore,
    private readonly gapGraceMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The watermark, once known (after the first advance). */
  get value(): number | undefined {
    return this.mark;
  }

  /** Moves the watermark as far as the committed ids allow (one caller at a time). */
  async advance(): Promise<AdvanceResult> {
    let start = this.mark ?? Math.max(0, (await this.store.maxId()) - START_LOOKBACK);
    this.mark = start;
    for (;;) {
      if (this.pending) {
        const waitMs = this.pending.at - this.now();
        if (waitMs > 0) return { mark: start, caughtUp: false, retryInMs: waitMs };
        await this.store.probe(this.pending.gaps);
        start = this.mark = this.pending.upTo;
        this.pending = undefined;
      }
      const ids = await this.store.idsAfter(start, SCAN_LIMIT);
      let mark: number = start;
      const gaps: IdGap[] = [];
      for (const id of ids) {
        if (id !== mark + 1) gaps.push({ after: mark, before: id });
        mark = id;
      }
      if (gaps.length === 0) {
        start = this.mark = mark;
        if (ids.length < SCAN_LIMIT) return { mark, caughtUp: true };
        continue;
      }
      // Up to the first gap the ids are contiguous: W moves there now.
      start = this.mark = gaps[0]!.after;
      this.pending = { gaps, upTo: mark, at: this.now() + this.gapGraceMs };
    }
  }
}
