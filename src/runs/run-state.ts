// The life of a run, as pure functions over an in-memory record: no I/O here, so every rule
// can be tested alone. The API records requested changes (start, complete a step) as the run's
// single pending command; a worker applies it. Only one command waits at a time, so a change
// is applied exactly once and in order: requested_seq = applied_seq + 1 while it waits. Some
// changes are made at once instead (cancel, retry, a step becoming overdue). Every change
// returns the new record together with the events that describe it (run-events.ts), which
// its writer stores in the same transaction.
import { SYSTEM, type Actor } from '../audit/actor.js';
import { DomainError, pointer } from '../errors.js';
import type { Template } from '../templates/template.js';
import type { NewRunEvent, RunEvent, RunEventData } from './run-events.js';
import {
  RunStateError,
  hasPendingChange,
  type RunDocument,
  type RunRecord,
  type StepState,
} from './run-record.js';
import { isOpen, type RunStatus } from './run-status.js';

/** The record with events appended, numbered after the run's latest, made by `actor`. */
function withEvents(
  run: RunRecord,
  at: Date,
  actor: Actor,
  events: readonly NewRunEvent[],
): RunRecord {
  const time = at.toISOString();
  const made = events.map(
    (e, i) =>
      ({ seq: run.eventSeq + i + 1, at: time, type: e.type, data: e.data, actor }) as RunEvent,
  );
  return { ...run, eventSeq: run.eventSeq + made.length, events: [...run.events, ...made] };
}

/**
 * Data values with nulls and undefined left out, as everywhere in what clients see: an
 * optional field of an event's data is absent, never null.
 */
function present<T extends Record<string, unknown>>(
  data: T,
): { [K in keyof T]: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(
    Object.entries(data).filter(([, v]) => v !== null && v !== undefined),
  ) as { [K in keyof T]: Exclude<T[K], null | undefined> };
}

const HOUR_MS = 3600_000;

/** map[key] only if it is the map's own entry: a page or input named "constructor" is data. */
function ownValue(map: Record<string, string>, key: string): string | null {
  return Object.hasOwn(map, key) ? (map[key] ?? null) : null;
}

function currentColumns(
  doc: RunDocument,
): Pick<
  RunRecord,
  | 'currentStepIndex'
  | 'currentStepName'
  | 'currentStepAssignee'
  | 'currentStepDueDate'
  | 'currentStepOverdue'
> {
  const step = doc.current_step === null ? undefined : doc.steps[doc.current_step];
  return {
    currentStepIndex: step ? doc.current_step : null,
    currentStepName: step?.name ?? null,
    currentStepAssignee: step?.assignee ?? null,
    currentStepDueDate: step?.due_date ? new Date(step.due_date) : null,
    currentStepOverdue: step?.overdue === true,
  };
}

export function newRun(
  id: string,
  organizationId: string,
  template: Template,
  inputFields: Record<string, string>,
  userAssignments: Record<string, string>,
  now: Date,
  actor: Actor,
  labels?: Record<string, string>,
): RunRecord {
  const at = now.toISOString();
  const document: RunDocument = {
    template: {
      id: template.id,
      name: template.name,
      version: template.version,
      pages: template.pages,
    },
    input_fields: inputFields,
    user_assignments: userAssignments,
    steps: template.pages.map((page) => ({
      name: page.name,
      status: 'waiting',
      assignee: null,
      due_date: null,
      started_at: null,
      completed_at: null,
    })),
    current_step: null,
    pending: { seq: 1, type: 'start', requested_at: at },
    error: null,
    // Left out when there are none: a run without labels is stored as before.
    ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
  };
  const run: RunRecord = {
    id,
    organizationId,
    templateId: template.id,
    templateVersion: template.version,
    workflowName: template.name,
    status: 'pending',
    ...currentColumns(document),
    document,
    requestedSeq: 1,
    appliedSeq: 0,
    pendingSince: now,
    lastActivity: now,
    createdAt: now,
    eventSeq: 0,
    events: [],
  };
  return withEvents(run, now, actor, [
    { type: 'run.created', data: { templateId: template.id, workflowName: template.name } },
  ]);
}

function startStep(doc: RunDocument, index: number, now: Date): StepState[] {
  const page = doc.template.pages[index];
  if (!page) throw new RunStateError(`run has no step ${index}`);
  return doc.steps.map((step, i) =>
    i === index
      ? {
          ...step,
          status: 'active',
          assignee: ownValue(doc.user_assignments, page.name),
          due_date:
            page.dueInHours !== undefined && page.dueInHours !== null
              ? new Date(now.getTime() + page.dueInHours * HOUR_MS).toISOString()
              : null,
          started_at: now.toISOString(),
        }
      : step,
  );
}

/** What a step's events say of it once it has become current. */
function stepStarted(step: StepState): Pick<RunEventData<'run.started'>, 'assignee' | 'dueDate'> {
  return present({ assignee: step.assignee, dueDate: step.due_date });
}

/** The step at an index, which the run's document must have. */
function stepAt(doc: RunDocument, index: number): StepState {
  const step = doc.steps[index];
  if (!step) throw new RunStateError(`run has no step ${index}`);
  return step;
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
  // Last activity never moves backwards, even when worker clocks disagree.
  const at = new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
  const doc = run.document;
  let next: RunDocument;
  let status: RunStatus;
  let events: NewRunEvent[];

  if (command.type === 'start') {
    if (run.status !== 'pending') throw new RunStateError(`cannot start a ${run.status} run`);
    if (doc.template.pages.length === 0) throw new RunStateError('template has no pages');
    next = { ...doc, steps: startStep(doc, 0, at), current_step: 0, pending: null };
    status = 'active';
    const first = stepAt(next, 0);
    events = [{ type: 'run.started', data: { step: first.name, ...stepStarted(first) } }];
  } else {
    if (run.status !== 'active' || doc.current_step !== command.step) {
      throw new RunStateError(`cannot complete step ${command.step} of a ${run.status} run`);
    }
    const steps = doc.steps.map((step, i) =>
      i === command.step
        ? { ...step, status: 'completed' as const, completed_at: at.toISOString() }
        : step,
    );
    const merged = {
      ...doc,
      input_fields: { ...doc.input_fields, ...command.input_fields },
      steps,
    };
    const nextIndex = command.step + 1;
    const completed = { step: stepAt(doc, command.step).name, inputFields: command.input_fields };
    if (nextIndex < doc.template.pages.length) {
      next = {
        ...merged,
        steps: startStep(merged, nextIndex, at),
        current_step: nextIndex,
        pending: null,
      };
      status = 'active';
      const upcoming = stepAt(next, nextIndex);
      const { assignee, dueDate } = stepStarted(upcoming);
      events = [
        {
          type: 'step.completed',
          data: {
            ...completed,
            nextStep: upcoming.name,
            ...present({ nextAssignee: assignee, nextDueDate: dueDate }),
          },
        },
      ];
    } else {
      next = { ...merged, current_step: null, pending: null };
      status = 'completed';
      events = [
        { type: 'step.completed', data: completed },
        { type: 'run.completed', data: {} },
      ];
    }
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

/**
 * Records a request to complete the current step, after checking that the run is active,
 * that no completion already waits, that the step the caller named (if any) is the current one
 * (so a retried or doubled request cannot complete the next step), that the given fields belong to the current page and that
 * every required field of that page has a value once they are merged.
 */
export function requestStepCompletion(
  run: RunRecord,
  inputFields: Record<string, string>,
  now: Date,
  actor: Actor,
  expectedStep?: string,
): RunRecord {
  if (run.status === 'pending') {
    throw new DomainError('run_not_started', 'the run has not started yet; try again shortly');
  }
  if (run.status !== 'active') {
    throw new DomainError(
      'run_not_active',
      `the run is ${run.status}; only an active run has a step to complete`,
    );
  }
  if (hasPendingChange(run)) {
    throw new DomainError(
      'completion_pending',
      'a completion of the current step is already being applied',
    );
  }
  const doc = run.document;
  const index = doc.current_step;
  const page = index === null ? undefined : doc.template.pages[index];
  // An active run always has a current step: only a broken document has none.
  if (index === null || !page)
    throw new DomainError('run_not_active', 'the run has no current step');
  if (expectedStep !== undefined && expectedStep !== page.name) {
    throw new DomainError(
      'step_not_current',
      `step '${expectedStep}' is not the current step; the run is at '${page.name}'`,
      pointer('step_name'),
    );
  }

  const pageInputs = new Set(page.inputFields.map((f) => f.inputId));
  for (const key of Object.keys(inputFields)) {
    if (!pageInputs.has(key)) {
      throw new DomainError(
        'unknown_input_field',
        `input field '${key}' does not belong to the current step '${page.name}'`,
        pointer('input_fields', key),
      );
    }
  }
  const merged = { ...doc.input_fields, ...inputFields };
  const missing = page.inputFields
    .filter((f) => f.required && (ownValue(merged, f.inputId) ?? '').trim() === '')
    .map((f) => f.inputId);
  if (missing.length > 0) {
    throw new DomainError(
      'missing_required_field',
      `required field${missing.length > 1 ? 's' : ''} of step '${page.name}' missing: ${missing.join(', ')}`,
      pointer('input_fields', missing[0]!),
    );
  }

  const seq = run.requestedSeq + 1;
  return {
    ...run,
    document: {
      ...doc,
      pending: {
        seq,
        type: 'complete_step',
        step: index,
        input_fields: inputFields,
        requested_at: now.toISOString(),
        requested_by: actor,
      },
    },
    requestedSeq: seq,
    pendingSince: now,
  };
}

/**
 * A run a worker gave up on: kept, with the reason, and nothing more owed. The change that
 * failed stays in the document (pending), so that a retry can request it again.
 */
export function failRun(run: RunRecord, message: string, now: Date): RunRecord {
  const at = new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
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
  const at = new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
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
  const at = new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
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
