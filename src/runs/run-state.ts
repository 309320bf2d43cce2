// The life of a run, as pure functions over an in-memory record: no I/O here, so every rule
// can be tested alone. The API records requested changes (start, complete a step) as the run's
// single pending command; a worker applies it. Only one command waits at a time, so a change
// is applied exactly once and in order: requested_seq = applied_seq + 1 while it waits.
import { badRequest, conflict } from '../errors.js';
import type { Template, TemplatePage } from '../templates/template.js';

export type RunStatus = 'pending' | 'active' | 'completed' | 'failed';
export type StepStatus = 'waiting' | 'active' | 'completed';

export interface StepState {
  name: string;
  status: StepStatus;
  assignee: string | null;
  due_date: string | null;
  started_at: string | null;
  completed_at: string | null;
}

export type RunCommand =
  | { seq: number; type: 'start'; requested_at: string }
  | {
      seq: number;
      type: 'complete_step';
      step: number;
      input_fields: Record<string, string>;
      requested_at: string;
    };

/** run_json: everything needed to show a run without reading its template again. */
export interface RunDocument {
  template: { id: string; name: string; pages: TemplatePage[] };
  input_fields: Record<string, string>;
  user_assignments: Record<string, string>;
  steps: StepState[];
  current_step: number | null;
  pending: RunCommand | null;
  error: { message: string; at: string } | null;
}

export interface RunRecord {
  id: string;
  organizationId: string;
  templateId: string;
  workflowName: string;
  status: RunStatus;
  currentStepIndex: number | null;
  currentStepName: string | null;
  currentStepAssignee: string | null;
  currentStepDueDate: Date | null;
  document: RunDocument;
  requestedSeq: number;
  appliedSeq: number;
  pendingSince: Date | null;
  lastActivity: Date;
  createdAt: Date;
}

const serialized = new WeakMap<RunDocument, string>();

/**
 * The document as JSON, computed once per document: a create stores it and answers with it.
 * Safe to keep because a document is never changed in place; every change makes a new one.
 */
export function documentJson(document: RunDocument): string {
  let json = serialized.get(document);
  if (json === undefined) {
    json = JSON.stringify(document);
    serialized.set(document, json);
  }
  return json;
}

/** A run that cannot be applied however often it is retried (a broken record). */
export class RunStateError extends Error {}

const HOUR_MS = 3600_000;

/** map[key] only if it is the map's own entry: a page or input named "constructor" is data. */
function ownValue(map: Record<string, string>, key: string): string | null {
  return Object.hasOwn(map, key) ? (map[key] ?? null) : null;
}

function currentColumns(
  doc: RunDocument,
): Pick<
  RunRecord,
  'currentStepIndex' | 'currentStepName' | 'currentStepAssignee' | 'currentStepDueDate'
> {
  const step = doc.current_step === null ? undefined : doc.steps[doc.current_step];
  return {
    currentStepIndex: step ? doc.current_step : null,
    currentStepName: step?.name ?? null,
    currentStepAssignee: step?.assignee ?? null,
    currentStepDueDate: step?.due_date ? new Date(step.due_date) : null,
  };
}

export function newRun(
  id: string,
  organizationId: string,
  template: Template,
  inputFields: Record<string, string>,
  userAssignments: Record<string, string>,
  now: Date,
): RunRecord {
  const at = now.toISOString();
  const document: RunDocument = {
    template: { id: template.id, name: template.name, pages: template.pages },
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
  };
  return {
    id,
    organizationId,
    templateId: template.id,
    workflowName: template.name,
    status: 'pending',
    ...currentColumns(document),
    document,
    requestedSeq: 1,
    appliedSeq: 0,
    pendingSince: now,
    lastActivity: now,
    createdAt: now,
  };
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

/** True when the run holds a change no worker has applied yet. */
export function hasPendingChange(run: RunRecord): boolean {
  return run.status !== 'failed' && run.requestedSeq > run.appliedSeq;
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

  if (command.type === 'start') {
    if (run.status !== 'pending') throw new RunStateError(`cannot start a ${run.status} run`);
    if (doc.template.pages.length === 0) throw new RunStateError('template has no pages');
    next = { ...doc, steps: startStep(doc, 0, at), current_step: 0, pending: null };
    status = 'active';
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
    if (nextIndex < doc.template.pages.length) {
      next = {
        ...merged,
        steps: startStep(merged, nextIndex, at),
        current_step: nextIndex,
        pending: null,
      };
      status = 'active';
    } else {
      next = { ...merged, current_step: null, pending: null };
      status = 'completed';
    }
  }

  return {
    ...run,
    status,
    ...currentColumns(next),
    document: next,
    appliedSeq: command.seq,
    pendingSince: null,
    lastActivity: at,
  };
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
  expectedStep?: string,
): RunRecord {
  if (run.status !== 'active') {
    throw conflict(
      run.status === 'pending'
        ? 'the run has not started yet; try again shortly'
        : `the run is ${run.status}; only an active run has a step to complete`,
    );
  }
  if (hasPendingChange(run)) {
    throw conflict('a completion of the current step is already being applied');
  }
  const doc = run.document;
  const index = doc.current_step;
  const page = index === null ? undefined : doc.template.pages[index];
  if (index === null || !page) throw conflict('the run has no current step');
  if (expectedStep !== undefined && expectedStep !== page.name) {
    throw conflict(`step '${expectedStep}' is not the current step; the run is at '${page.name}'`);
  }

  const pageInputs = new Set(page.inputFields.map((f) => f.inputId));
  for (const key of Object.keys(inputFields)) {
    if (!pageInputs.has(key)) {
      throw badRequest(
        `input field '${key}' does not belong to the current step '${page.name}'`,
        'unknown_input_field',
      );
    }
  }
  const merged = { ...doc.input_fields, ...inputFields };
  const missing = page.inputFields
    .filter((f) => f.required && (ownValue(merged, f.inputId) ?? '').trim() === '')
    .map((f) => f.inputId);
  if (missing.length > 0) {
    throw badRequest(
      `required field${missing.length > 1 ? 's' : ''} of step '${page.name}' missing: ${missing.join(', ')}`,
      'missing_required_field',
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
      },
    },
    requestedSeq: seq,
    pendingSince: now,
  };
}

/** A run a worker gave up on: kept, with the reason, and nothing more owed. */
export function failRun(run: RunRecord, message: string, now: Date): RunRecord {
  const at = new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
  return {
    ...run,
    status: 'failed',
    document: { ...run.document, error: { message, at: at.toISOString() } },
    pendingSince: null,
    lastActivity: at,
  };
}
