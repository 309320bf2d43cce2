// People taking and handing over the current step: a claim (refused when someone else holds it,
// unless overridden), an unclaim, an assignment to someone. Each is made at once, a
// step.assigned event with the assignee before and after, by the caller's key; its writer
// stores it guarded by the version it read, so of two racing claims one is stored and the
// other, read again, meets the winner's claim. No directory: user ids are the client's strings.
import type { Actor } from '../../audit/actor.js';
import { DomainError, pointer } from '../../errors.js';
import { hasPendingChange, type RunRecord } from '../run-record.js';
import { changeTime, currentColumns, present, withEvents } from './run-change.js';

type Change = 'claim' | 'unclaim' | 'assign';

/** The current step's index, if `stepName` is the current step of an active run that can change. */
function currentStep(run: RunRecord, stepName: string): number {
  if (run.status === 'pending') {
    throw new DomainError('run_not_started', 'the run has not started yet; try again shortly');
  }
  if (run.status !== 'active' || run.document.current_step === null) {
    throw new DomainError(
      'run_not_active',
      `the run is ${run.status}; only an active run has a step to take`,
    );
  }
  const index = run.document.current_step;
  const name = run.document.steps[index]?.name;
  if (name !== stepName) {
    throw new DomainError(
      'step_not_current',
      `step '${stepName}' is not the current step; the run is at '${name}'`,
      pointer('step_name'),
    );
  }
  if (hasPendingChange(run)) {
    throw new DomainError(
      'completion_pending',
      'the step is being completed: a completion already waits for a worker',
    );
  }
  return index;
}

/** The run with the current step given to `assignee` (null: nobody); unchanged: undefined. */
function setAssignee(
  run: RunRecord,
  index: number,
  assignee: string | null,
  change: Change,
  now: Date,
  actor: Actor,
): RunRecord | undefined {
  const doc = run.document;
  const step = doc.steps[index]!;
  if (step.assignee === assignee) return undefined;
  const at = changeTime(run, now);
  const document = {
    ...doc,
    steps: doc.steps.map((s, i) => (i === index ? { ...s, assignee } : s)),
  };
  return withEvents(
    { ...run, ...currentColumns(document), document, lastActivity: at },
    at,
    actor,
    [
      {
        type: 'step.assigned',
        data: {
          step: step.name,
          change,
          ...present({ assignee, previousAssignee: step.assignee }),
        },
      },
    ],
  );
}

/**
 * Gives the current step to `userId`. Someone else holding it refuses the claim
 * (step_already_claimed) unless `allowOverride`; the user holding it already changes nothing
 * (undefined).
 */
export function claimStep(
  run: RunRecord,
  stepName: string,
  userId: string,
  allowOverride: boolean,
  now: Date,
  actor: Actor,
): RunRecord | undefined {
  const index = currentStep(run, stepName);
  const holder = run.document.steps[index]!.assignee;
  if (holder !== null && holder !== userId && !allowOverride) {
    throw new DomainError(
      'step_already_claimed',
      `step '${stepName}' is held by '${holder}'; claim with allow_override to take it`,
      pointer('user_id'),
    );
  }
  return setAssignee(run, index, userId, 'claim', now, actor);
}

/**
 * Leaves the current step to its candidates again. With `userId`, only if that user holds it
 * (step_not_held otherwise): a user letting go never undoes someone else's claim.
 */
export function unclaimStep(
  run: RunRecord,
  stepName: string,
  userId: string | undefined,
  now: Date,
  actor: Actor,
): RunRecord | undefined {
  const index = currentStep(run, stepName);
  const holder = run.document.steps[index]!.assignee;
  if (userId !== undefined && holder !== userId) {
    throw new DomainError(
      'step_not_held',
      holder === null
        ? `step '${stepName}' is held by nobody`
        : `step '${stepName}' is held by '${holder}', not '${userId}'`,
      pointer('user_id'),
    );
  }
  return setAssignee(run, index, null, 'unclaim', now, actor);
}

/** Gives the current step to `userId`, whoever holds it (an assignment, not a claim). */
export function assignStep(
  run: RunRecord,
  stepName: string,
  userId: string,
  now: Date,
  actor: Actor,
): RunRecord | undefined {
  const index = currentStep(run, stepName);
  return setAssignee(run, index, userId, 'assign', now, actor);
}
