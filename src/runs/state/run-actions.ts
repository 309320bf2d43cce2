// The changes made at once rather than by a worker: a run failed, cancelled or retried, and a
// step marked overdue. Each returns the new record with its events.
import { SYSTEM, type Actor } from '../../audit/actor.js';
import { DomainError } from '../../errors.js';
import { hasPendingChange, type RunDocument, type RunRecord } from '../run-record.js';
import { isOpen } from '../run-status.js';
import { changeTime, currentColumns, present, withEvents } from './run-change.js';

/**
 * A run a worker gave up on: kept, with the reason, and nothing more owed. The change that
 * failed stays in the document (pending), so that a retry can request it again.
 */
export function failRun(run: RunRecord, message: string, now: Date): RunRecord {
  const at = changeTime(run, now);
  return withEvents(
    {
      ...run,
      status: 'failed',
      document: { ...run.document, error: { message, at: at.toISOString() } },
      pendingSince: null,
      lastActivity: at,
    },
    at,
    SYSTEM,
    [{ type: 'run.failed', data: { error: message, ...present({ step: run.currentStepName }) } }],
  );
}

/**
 * Cancels a pending or active run at once. A change waiting for a worker is dropped (nothing
 * more is owed, so a worker that meets the run later finds nothing to do); a run that has
 * ended cannot be cancelled.
 */
export function cancelRun(
  run: RunRecord,
  reason: string | undefined,
  now: Date,
  actor: Actor,
): RunRecord {
  if (!isOpen(run.status)) {
    throw new DomainError(
      'run_not_cancellable',
      `the run is ${run.status}; only a pending or active run can be cancelled`,
    );
  }
  const at = changeTime(run, now);
  const doc = run.document;
  const document: RunDocument = {
    ...doc,
    steps: doc.steps.map((step, i) =>
      i === doc.current_step ? { ...step, status: 'cancelled' as const } : step,
    ),
    current_step: null,
    pending: null,
  };
  return withEvents(
    {
      ...run,
      status: 'cancelled',
      ...currentColumns(document),
      document,
      appliedSeq: run.requestedSeq,
      pendingSince: null,
      lastActivity: at,
    },
    at,
    actor,
    [{ type: 'run.cancelled', data: present({ reason, step: run.currentStepName }) }],
  );
}

/**
 * Requests a failed run's failed change again: it waits for a worker as it did before it
 * failed, and the run is pending or active again meanwhile.
 */
export function retryRun(run: RunRecord, now: Date, actor: Actor): RunRecord {
  const command = run.document.pending;
  if (run.status !== 'failed') {
    throw new DomainError(
      'run_not_retryable',
      `the run is ${run.status}; only a failed run can be retried`,
    );
  }
  if (!command || command.seq !== run.requestedSeq || run.requestedSeq <= run.appliedSeq) {
    throw new DomainError('run_not_retryable', 'the failed run holds no change to retry');
  }
  const at = changeTime(run, now);
  return withEvents(
    {
      ...run,
      status: command.type === 'start' ? 'pending' : 'active',
      document: { ...run.document, error: null },
      pendingSince: at,
      lastActivity: at,
    },
    at,
    actor,
    [
      {
        type: 'run.retried',
        data:
          command.type === 'start'
            ? { change: 'start' }
            : {
                change: 'completeStep',
                ...present({ step: run.document.steps[command.step]?.name }),
              },
      },
    ],
  );
}

/**
 * Marks the current step overdue, if it is still the given step, still current and past its
 * due date, not marked already and not being completed; undefined when there is nothing to
 * mark (completed or cancelled first, say). Being overdue is not activity: last_activity does
 * not move.
 */
export function markOverdue(run: RunRecord, step: number, now: Date): RunRecord | undefined {
  const doc = run.document;
  const current = doc.current_step === null ? undefined : doc.steps[doc.current_step];
  if (
    run.status !== 'active' ||
    // A completion waiting for a worker moves the step on: leave it to that, so a worker's
    // write never meets an overdue marking it did not read.
    hasPendingChange(run) ||
    doc.current_step !== step ||
    !current?.due_date ||
    current.overdue === true ||
    Date.parse(current.due_date) > now.getTime()
  ) {
    return undefined;
  }
  const document: RunDocument = {
    ...doc,
    steps: doc.steps.map((s, i) => (i === step ? { ...s, overdue: true } : s)),
  };
  return withEvents({ ...run, ...currentColumns(document), document }, now, SYSTEM, [
    { type: 'step.overdue', data: { step: current.name, dueDate: current.due_date } },
  ]);
}
