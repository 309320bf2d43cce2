// The changes made at once rather than by a worker: a run failed, cancelled or retried (the
// clock's changes are step-clock.ts; people's, step-people.ts). Each returns the new record with its events.
import { SYSTEM, type Actor } from '../../audit/actor.js';
import { DomainError } from '../../errors.js';
import type { RunDocument, RunRecord } from '../run-record.js';
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
      // A failed run owes the clock nothing (a retry makes it active again).
      currentStepWakeAt: null,
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
      currentStepWakeAt: currentColumns(run.document).currentStepWakeAt,
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
