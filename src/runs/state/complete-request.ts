// A request to complete the current step, checked and recorded as the run's pending command
// for a worker to apply (apply-pending.ts).
import type { Actor } from '../../audit/actor.js';
import { DomainError, pointer } from '../../errors.js';
import type { Decision } from '../../templates/definition/definition-types.js';
import { missingRequired } from '../../templates/definition/field-values.js';
import { hasPendingChange, type RunRecord } from '../run-record.js';
import { ownValue } from './run-change.js';
import { checkValues } from './values.js';

/** Who did the step, and an approval step's decision and comment. */
export interface CompletionBy {
  completedBy?: string;
  decision?: Decision;
  comment?: string;
}

/**
 * Records a request to complete the current step, after checking that the run is active,
 * that no completion already waits, that the step the caller named (if any) is the current one
 * (so a retried or doubled request cannot complete the next step), that the given fields belong
 * to the current page, that each value is one its field takes (type and limits), and that every
 * required field of that page has a value once they are merged. An approval step takes a
 * decision, and only it does; a rejection needs no required field (it sends the work back).
 */
export function requestStepCompletion(
  run: RunRecord,
  inputFields: Record<string, string>,
  now: Date,
  actor: Actor,
  expectedStep?: string,
  by: CompletionBy = {},
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

  if (page.kind === 'approval' && by.decision === undefined) {
    throw new DomainError(
      'decision_required',
      `step '${page.name}' is an approval: completing it takes a decision, approved or rejected`,
      pointer('decision'),
    );
  }
  if (page.kind !== 'approval' && (by.decision !== undefined || by.comment !== undefined)) {
    throw new DomainError(
      'decision_not_taken',
      `step '${page.name}' is not an approval: it takes no decision or comment`,
      pointer(by.decision !== undefined ? 'decision' : 'comment'),
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
  checkValues(doc.template, inputFields);
  const merged = { ...doc.input_fields, ...inputFields };
  const missing = (by.decision === 'rejected' ? [] : page.inputFields)
    .filter((f) => f.required && missingRequired(f, ownValue(merged, f.inputId) ?? undefined))
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
        ...(by.completedBy !== undefined ? { completed_by: by.completedBy } : {}),
        ...(by.decision !== undefined ? { decision: by.decision } : {}),
        ...(by.comment !== undefined ? { comment: by.comment } : {}),
      },
    },
    requestedSeq: seq,
    pendingSince: now,
  };
}
