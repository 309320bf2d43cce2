// The clock of current steps: when a step becomes current with something owed by the clock (its
// due date, an escalation, an approval's decision timeout: its wake time, current_step_wake_at),
// a delayed "steps due" job is scheduled for that time (one per second in which steps wake);
// when it fires, every step whose wake time came gets what it owes (state/step-clock.ts). MySQL
// decides (wakeRun re-reads the run and guards its write), Redis only keeps time: a timer lost
// with Redis is made up for by the reconciler, which runs the same sweep.
import { SecondTimers } from '../jobs/second-timers.js';
import type { StepDueJobs } from '../jobs/step-due.js';
import { countChange } from '../metrics/metrics.js';
import { wakeStep } from './run-state.js';
import type { RunRecord } from './run-record.js';
import type { RunStore } from './run-store.js';

/** The timers of current steps (jobs/second-timers.ts: one delayed job per second). */
export class DueTimers {
  private readonly timers: SecondTimers;

  constructor(jobs: StepDueJobs) {
    this.timers = new SecondTimers(jobs);
  }

  /**
   * Schedules the timers of runs whose current step has a wake time. Best effort, after the
   * change was committed, and never throws: a timer Redis does not take is made up for by the
   * reconciler.
   */
  schedule(runs: readonly RunRecord[], now = Date.now()): Promise<void> {
    const times: Date[] = [];
    for (const run of runs) {
      if (run.status === 'active' && run.currentStepWakeAt) times.push(run.currentStepWakeAt);
    }
    return times.length === 0 ? Promise.resolve() : this.timers.at(times, now);
  }
}

/**
 * Gives every current step whose wake time came before `before` what the clock owes it;
 * returns the runs it changed (whose next wake times the caller may schedule).
 */
export async function wakeDueSteps(
  store: RunStore,
  before: Date,
  batch = 1000,
): Promise<RunRecord[]> {
  const changed: RunRecord[] = [];
  for (;;) {
    const due = await store.findWakeDue(before, batch);
    let progressed = 0;
    for (const run of due) {
      const next = await wakeRun(store, run.id);
      if (next) {
        changed.push(next);
        progressed++;
      }
    }
    // Stop when the scan is exhausted, or found only steps it could not change (a completion
    // waiting for a worker, or changed meanwhile).
    if (due.length < batch || progressed === 0) return changed;
  }
}

/**
 * Gives the run's current step what the clock owes it by `now`, if anything: a step completed
 * or a run cancelled first makes this a no-op. Returns the changed run, as stored.
 */
export async function wakeRun(
  store: RunStore,
  runId: string,
  now = new Date(),
): Promise<RunRecord | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const run = await store.findById(runId);
    if (!run) return undefined;
    const next = wakeStep(run, now);
    if (!next) return undefined;
    if (await store.storeChange(run, next)) {
      countChange('clock', next.events);
      return next;
    }
    // Someone changed the run meanwhile (a completion applied, a claim): look again.
  }
  return undefined;
}
