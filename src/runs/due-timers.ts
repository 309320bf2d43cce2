// Due dates that act: when a step with a due date becomes current, a delayed "steps due" job is
// scheduled for that time (one per second in which steps fall due); when it fires, every step
// still current and past its due date is marked overdue. MySQL decides (markStepOverdue
// re-reads the run and guards its write), Redis only keeps time: a timer lost with Redis is
// made up for by the reconciler, which runs the same sweep.
import { dueBucket, type StepDueJobs } from '../jobs/step-due.js';
import { countChange } from '../metrics/metrics.js';
import { markOverdue } from './run-state.js';
import type { RunRecord } from './run-record.js';
import type { RunStore } from './run-store.js';

/** Seconds remembered as scheduled, at most: past it the memory starts again (see DueTimers). */
const REMEMBERED_MAX = 100_000;

export class DueTimers {
  /**
   * The seconds (their firing times) this process has handed a timer to Redis for and that
   * have not come yet. Under a steady flow every batch of started runs falls due in the same
   * few seconds: asking Redis each time for a timer it already holds (the job id makes it a
   * no-op) cost a worker a BullMQ call per batch. A remembered timer that Redis then loses is
   * made up for by the reconciler, like any lost timer.
   */
  private readonly scheduled = new Set<number>();
  private forgottenUntil = 0;

  constructor(private readonly timers: StepDueJobs) {}

  /**
   * Schedules the timers of runs whose current step has a due date and is not overdue yet.
   * Best effort, after the change was committed, and never throws: a timer Redis does not
   * take is made up for by the reconciler.
   */
  async schedule(runs: readonly RunRecord[], now = Date.now()): Promise<void> {
    this.forgetPast(now);
    const buckets = new Set<number>();
    for (const run of runs) {
      if (run.status === 'active' && run.currentStepDueDate && !run.currentStepOverdue) {
        const dueAt = dueBucket(run.currentStepDueDate);
        if (dueAt <= now || !this.scheduled.has(dueAt)) buckets.add(dueAt);
      }
    }
    if (buckets.size === 0) return;
    if (!(await this.timers.enqueue([...buckets], { now }))) return; // logged; not remembered
    if (this.scheduled.size + buckets.size > REMEMBERED_MAX) this.scheduled.clear();
    for (const dueAt of buckets) if (dueAt > now) this.scheduled.add(dueAt);
  }

  /** Drops the remembered seconds that have come (at most once a second). */
  private forgetPast(now: number): void {
    if (now < this.forgottenUntil) return;
    this.forgottenUntil = now + 1000;
    for (const dueAt of this.scheduled) if (dueAt <= now) this.scheduled.delete(dueAt);
  }
}

/**
 * Marks overdue every step that is current and whose due date passed before `before`; returns
 * how many it marked.
 */
export async function markPastDueSteps(
  store: RunStore,
  before: Date,
  batch = 1000,
): Promise<number> {
  let marked = 0;
  for (;;) {
    const due = await store.findPastDue(before, batch);
    let progressed = 0;
    for (const run of due) {
      if (await markStepOverdue(store, run.id, Number(run.current_step_index))) progressed++;
    }
    marked += progressed;
    // Stop when the scan is exhausted, or found only steps it could not mark (changed meanwhile).
    if (due.length < batch || progressed === 0) return marked;
  }
}

/**
 * Marks the run's step overdue if it is still current and past due; a step completed or a run
 * cancelled first makes this a no-op. Returns whether it marked the step.
 */
export async function markStepOverdue(
  store: RunStore,
  runId: string,
  step: number,
  now = new Date(),
): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const run = await store.findById(runId);
    if (!run) return false;
    const next = markOverdue(run, step, now);
    if (!next) return false;
    if (await store.storeChange(run, next)) {
      countChange('overdue', next.events);
      return true;
    }
    // Someone changed the run meanwhile (a completion applied, a cancel): look again.
  }
  return false;
}
