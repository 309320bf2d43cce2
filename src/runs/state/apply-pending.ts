// A worker applies a run's pending command: the start, or a step's completion (complete-step.ts: a
// decision may send the run back or fail it). Each enters the next step through step-flow.ts,
// which decides what the rules show, skip, assign and set due.
import { SYSTEM } from '../../audit/actor.js';
import type { NewRunEvent, RunEventData } from '../run-events.js';
import {
  RunStateError,
  hasPendingChange,
  type RunDocument,
  type RunRecord,
} from '../run-record.js';
import type { RunStatus } from '../run-status.js';
import { changeTime, currentColumns, present, withEvents } from './run-change.js';
import { completeStep } from './complete-step.js';
import { enterFrom, type StartedStep } from './step-flow.js';

/** What a start's event says of the step that became current. */
function startedData(started: StartedStep): RunEventData<'run.started'> {
  const { step, rules } = started;
  return present({
    step: step.name,
    assignee: step.assignee,
    dueDate: step.due_date,
    assigneeByRule: rules?.assigned_by,
    dueByRule: rules?.due_by,
  });
}

/**
 * Applies the run's pending command. The result's appliedSeq is one higher; a caller stores it
 * only if the stored appliedSeq is still the one it read (the guard that makes a duplicate or
 * concurrent delivery a no-op).
 */
export function applyPending(run: RunRecord, now: Date): RunRecord {
  const command = run.document.pending;
  if (!hasPendingChange(run) || !command) {
    throw new RunStateError('run has no pending change');
  }
  if (command.seq !== run.appliedSeq + 1) {
    throw new RunStateError(
      `pending change ${command.seq} does not follow applied ${run.appliedSeq}`,
    );
  }
  const at = changeTime(run, now);
  const doc = run.document;
  let next: RunDocument;
  let status: RunStatus;
  let events: NewRunEvent[];

  if (command.type === 'start') {
    if (run.status !== 'pending') throw new RunStateError(`cannot start a ${run.status} run`);
    if (doc.template.pages.length === 0) throw new RunStateError('template has no pages');
    const entered = enterFrom(doc, 0, at, run.createdAt);
    // The rules cannot hide a run's first page (a rule tests values of earlier pages only).
    if (!entered.started) throw new RunStateError('no page of the template is visible');
    next = { ...doc, steps: entered.steps, current_step: entered.started.index, pending: null };
    status = 'active';
    events = [{ type: 'run.started', data: startedData(entered.started) }, ...entered.skipped];
  } else {
    if (run.status !== 'active' || doc.current_step !== command.step) {
      throw new RunStateError(`cannot complete step ${command.step} of a ${run.status} run`);
    }
    ({ next, status, events } = completeStep(run, command, at));
  }

  return withEvents(
    {
      ...run,
      status,
      ...currentColumns(next),
      document: next,
      appliedSeq: command.seq,
      pendingSince: null,
      lastActivity: at,
    },
    at,
    // A worker starts a run by itself; a step is completed by whoever asked for it.
    command.type === 'start' ? SYSTEM : (command.requested_by ?? SYSTEM),
    events,
  );
}
