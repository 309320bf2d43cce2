// Due dates that act: when a step with a due date becomes current, a delayed "step due" job is
// scheduled for that time; at it, the step is marked overdue if it is still current. MySQL
// decides (markStepOverdue re-reads the run and guards its write), Redis only keeps time: a
// timer lost with Redis is made up for by the reconciler (findPastDue).
import type { Queue } from 'bullmq';
import type { StepDueData } from '../jobs/step-due.js';
import { stepDueJobId } from '../jobs/step-due.js';
import type { Logger } from '../logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import { markOverdue, type RunRecord } from './run-state.js';
import type { RunStore } from './run-store.js';

export class DueTimers {
  constructor(
    private readonly queue: Queue<StepDueData>,
    private readonly log: Logger,
  ) {}

  /**
   * Schedules a timer for each run whose current step has a due date and is not overdue yet.
   * Best effort, after the change was committed: a timer Redis does not take is made up for
   * by the reconciler.
   */
  async schedule(runs: readonly RunRecord[], now = Date.now()): Promise<void> {
    const jobs = runs
      .filter(
        (run) =>
          run.status === 'active' &&
          run.currentStepIndex !== null &&
          run.currentStepDueDate !== null &&
          !run.currentStepOverdue,
      )
      .map((run) => {
        const data: StepDueData = { runId: run.id, step: run.currentStepIndex! };
        return {
          name: 'step-due',
          data,
          opts: {
            jobId: stepDueJobId(data),
            delay: Math.max(0, run.currentStepDueDate!.getTime() - now),
          },
        };
      });
    if (jobs.length === 0) return;
    try {
      await withTimeout(this.queue.addBulk(jobs), 1000, 'schedule due timers');
    } catch (err) {
      this.log.warn('due timers not scheduled; the reconciler will mark these steps', {
        err,
        runs: jobs.length,
      });
    }
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
    if (await store.storeChange(run, next)) return true;
    // Someone changed the run meanwhile (a completion applied, a cancel): look again.
  }
  return false;
}
