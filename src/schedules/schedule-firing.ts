// What a schedule owes at a moment, decided without I/O: the scheduled times that have come since
// its next time, each fired, skipped or held by the overlap rule, and those older than the
// catch-up window skipped (one record for them all); then its next time and when a sweep must
// look at it again. The writer (schedule-store.ts) stores the decision in one transaction with
// the runs it fires, guarded by the schedule's version, and a fire is unique per (schedule,
// scheduled time) in MySQL, so a time fires once whoever decides it.
//
// Overlap: the schedule's previous run is still pending or active.
//   - skip: a time that comes during an overlap is skipped (reason overlap);
//   - buffer_one: the first such time is held, and fires once the previous run has ended; later
//     ones while one is held are skipped;
//   - allow_all: every time fires.
import { nextTime, type CadenceSpec } from './cadence.js';

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const SKIP_REASONS = [
  'overlap',
  'catchup_window',
  'paused',
  'template_unavailable',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** What asked for a time: the cadence, a trigger, a backfill. */
export type FireKind = 'cadence' | 'trigger' | 'backfill';

/** A schedule as its sweep sees it. */
export interface DueSchedule {
  spec: CadenceSpec;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  /** The first scheduled time not yet handled; null once the cadence has ended. */
  nextFireAt: Date | null;
  /** buffer_one: the time held until the previous run ends. */
  bufferedFor: Date | null;
  /** Whether the schedule's latest run is still pending or active. */
  lastRunOpen: boolean;
}

export interface Fire {
  scheduledFor: Date;
  kind: FireKind;
  /** A time held during an overlap (buffer_one) that fires now: its record says it was held. */
  held?: boolean;
}

/** Skipped times: one, or (catch-up) a range of `missed` times from scheduledFor to until. */
export interface Skip {
  scheduledFor: Date;
  reason: SkipReason;
  missed: number;
  until?: Date;
}

export interface FireDecision {
  fires: Fire[];
  skips: Skip[];
  /** A time held (buffer_one), in place of the one the schedule held before. */
  bufferedFor: Date | null;
  nextFireAt: Date | null;
  /** When a sweep owes the schedule a look: its next time, or soon while a time is held. */
  wakeAt: Date | null;
}

/** How often a schedule holding a time looks at its previous run again. */
export const BUFFER_RECHECK_MS = 2000;
/** The most times one decision handles (the rest are owed at once, to the next sweep). */
export const TIMES_PER_DECISION = 100;
/** The most skipped times counted one by one for a catch-up record. */
const MISSED_COUNTED = 100_000;

/**
 * What the schedule owes at `now`. Times in `recorded` (ms) already have a record (a trigger or
 * a backfill took them): they are passed over.
 */
export function decideFires(
  s: DueSchedule,
  now: Date,
  recorded: ReadonlySet<number> = new Set(),
): FireDecision {
  const fires: Fire[] = [];
  const skips: Skip[] = [];
  let open = s.lastRunOpen;
  let buffered = s.bufferedFor;
  if (buffered && !open) {
    // Recorded as held (its own kind kept there); the record becomes the fire.
    fires.push({ scheduledFor: buffered, kind: 'cadence', held: true });
    buffered = null;
    open = true;
  }

  let next = s.nextFireAt;
  const oldest = now.getTime() - s.catchupWindowMs;
  // Times older than the catch-up window: one skip record for them all.
  if (next && next.getTime() < oldest) {
    let missed = 0;
    let last = next;
    let at: Date | undefined = next;
    while (at && at.getTime() < oldest && missed < MISSED_COUNTED) {
      missed++;
      last = at;
      at = nextTime(s.spec, at);
    }
    if (at && at.getTime() < oldest) at = nextTime(s.spec, new Date(oldest - 1));
    if (!recorded.has(next.getTime())) {
      skips.push({
        scheduledFor: next,
        reason: 'catchup_window',
        missed,
        ...(missed > 1 ? { until: last } : {}),
      });
    }
    next = at ?? null;
  }

  let handled = 0;
  while (next && next.getTime() <= now.getTime() && handled < TIMES_PER_DECISION) {
    handled++;
    if (recorded.has(next.getTime())) {
      // Taken already (a trigger or backfill at that very time).
    } else if (!open || s.overlap === 'allow_all') {
      fires.push({ scheduledFor: next, kind: 'cadence' });
      open = true;
    } else if (s.overlap === 'buffer_one' && !buffered) {
      buffered = next;
    } else {
      skips.push({ scheduledFor: next, reason: 'overlap', missed: 1 });
    }
    next = nextTime(s.spec, next) ?? null;
  }

  let wake = next ? next.getTime() : Infinity;
  if (next && next.getTime() <= now.getTime()) wake = now.getTime();
  if (buffered) wake = Math.min(wake, now.getTime() + BUFFER_RECHECK_MS);
  return {
    fires,
    skips,
    bufferedFor: buffered,
    nextFireAt: next,
    wakeAt: wake === Infinity ? null : new Date(wake),
  };
}
