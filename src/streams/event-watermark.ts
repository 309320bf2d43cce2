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
// A gap that fills during its grace costs nothing more: each advance reads the ids again, and
// only gaps still open when their grace ends are probed; each gap has its own grace.
import type { IdGap, StreamStore } from './stream-store.js';

/** Ids read per query while moving the watermark. */
const SCAN_LIMIT = 10_000;
/**
 * Where a process starts: this many ids below the newest committed one are taken as decided
 * (a writer's transaction lives at most WRITE_TIMEOUT_MS: 200,000 ids in 5 s would be 40,000
 * events a second, far beyond what this service writes); those above are walked and probed.
 */
const START_LOOKBACK = 200_000;

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
  /** When each open gap (by its first missing id) was first seen. */
  private readonly firstSeen = new Map<number, number>();

  constructor(
    private readonly store: StreamStore,
    private readonly gapGraceMs: number,
    private readonly now: () => number = Date.now,
    /** Where to start instead (a reader's stored cursor, every id up to it decided). */
    private readonly start?: () => Promise<number>,
  ) {}

  /** The watermark, once known (after the first advance). */
  get value(): number | undefined {
    return this.mark;
  }

  /** Moves the watermark as far as the committed ids allow (one caller at a time). */
  async advance(): Promise<AdvanceResult> {
    let mark =
      this.mark ??
      (this.start ? await this.start() : Math.max(0, (await this.store.maxId()) - START_LOOKBACK));
    this.mark = mark;
    for (;;) {
      const ids = await this.store.idsAfter(mark, SCAN_LIMIT);
      const gaps: IdGap[] = [];
      let last = mark;
      for (const id of ids) {
        if (id !== last + 1) gaps.push({ after: last, before: id });
        last = id;
      }
      const now = this.now();
      for (const gap of gaps)
        if (!this.firstSeen.has(gap.after + 1)) this.firstSeen.set(gap.after + 1, now);
      const dueAt = (gap: IdGap) => this.firstSeen.get(gap.after + 1)! + this.gapGraceMs;
      if (gaps.length === 0) {
        mark = this.settle(last);
        if (ids.length < SCAN_LIMIT) return { mark, caughtUp: true };
        continue;
      }
      // The gaps whose grace is over, from the first on; a gap that filled meanwhile is gone.
      let due = 0;
      while (due < gaps.length && dueAt(gaps[due]!) <= now) due++;
      if (due === 0) {
        // Up to the first gap the ids are contiguous: W moves there now.
        mark = this.settle(gaps[0]!.after);
        return { mark, caughtUp: false, retryInMs: dueAt(gaps[0]!) - now };
      }
      await this.store.probe(gaps.slice(0, due));
      // Every id up to the first gap still in its grace (or the last id read) is decided.
      mark = this.settle(due < gaps.length ? gaps[due]!.after : last);
    }
  }

  /** Moves the watermark to `mark`, forgetting the gaps below it. */
  private settle(mark: number): number {
    this.mark = mark;
    for (const first of this.firstSeen.keys()) if (first <= mark) this.firstSeen.delete(first);
    return mark;
  }
}
