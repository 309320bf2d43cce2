// A step's completion, as a worker applies it: the step is completed with its values (and the
// user who did it), and the run enters its next step. An approval page's step is completed by a
// decision: approved, the run goes on as after any step; rejected, its page's onReject sends the
// run back to an earlier page (reopenFrom), fails it, or lets it go on (the rules then see the
// decision); the rejection that reaches the page's maxRejections fails a run onReject would send
// back, so a send-back loop always ends.
import {
  DEFAULT_MAX_REJECTIONS,
  type TemplatePage,
} from '../../templates/definition/definition-types.js';
import type { NewRunEvent } from '../run-events.js';
import type { RunCommand, RunDocument, RunRecord, StepState } from '../run-record.js';
import type { RunStatus } from '../run-status.js';
import { present, stepAt } from './run-change.js';
import { enterFrom, reopenFrom, type Entered, type StartedStep } from './step-flow.js';

type Completion = Extract<RunCommand, { type: 'complete_step' }>;

interface Completed {
  next: RunDocument;
  status: RunStatus;
  events: NewRunEvent[];
}

/** What a completion's event says of the step that became current, if one did. */
function nextData(started: StartedStep | undefined) {
  if (!started) return {};
  const { step, rules } = started;
  return present({
    nextStep: step.name,
    nextAssignee: step.assignee,
    nextDueDate: step.due_date,
    nextShownByRule: rules?.shown_by,
    nextAssigneeByRule: rules?.assigned_by,
    nextDueByRule: rules?.due_by,
  });
}

/** Completes the current step (command.step) of an active run, at `at`. */
export function completeStep(run: RunRecord, command: Completion, at: Date): Completed {
  const doc = run.document;
  const index = command.step;
  const page = doc.template.pages[index];
  const before = stepAt(doc, index);
  const decision = page?.kind === 'approval' ? command.decision : undefined;
  const done: StepState = {
    ...before,
    status: 'completed',
    completed_at: at.toISOString(),
    ...present({
      completed_by: command.completed_by,
      decision,
      comment: decision ? command.comment : undefined,
      decided_by: decision ? command.completed_by : undefined,
    }),
  };
  const merged: RunDocument = {
    ...doc,
    input_fields: { ...doc.input_fields, ...command.input_fields },
    steps: doc.steps.map((step, i) => (i === index ? done : step)),
  };
  const goesOn = page?.onReject?.action === 'continue';
  if (page && decision === 'rejected' && !goesOn) return reject(run, merged, page, command, at);

  // A rejection that goes on is counted, as every rejection is.
  const counted = decision === 'rejected' ? countRejection(merged, index) : merged;
  const entered = enterFrom(counted, index + 1, at, run.createdAt);
  const completed: NewRunEvent =
    decision === 'approved'
      ? {
          type: 'step.approved',
          data: { ...decisionData(done, command), ...nextData(entered.started) },
        }
      : decision === 'rejected'
        ? {
            type: 'step.rejected',
            data: {
              ...decisionData(done, command),
              ...nextData(entered.started),
              rejections: stepAt(counted, index).rejections ?? 1,
              outcome: 'continued',
            },
          }
        : {
            type: 'step.completed',
            data: {
              step: before.name,
              inputFields: command.input_fields,
              ...present({ completedBy: command.completed_by }),
              ...nextData(entered.started),
            },
          };
  return goOn(counted, entered, [completed]);
}

/** The run gone on into the step `entered` started (none: completed), its events after `first`. */
function goOn(doc: RunDocument, entered: Entered, first: NewRunEvent[]): Completed {
  return {
    next: {
      ...doc,
      steps: entered.steps,
      current_step: entered.started ? entered.started.index : null,
      pending: null,
    },
    status: entered.started ? 'active' : 'completed',
    events: [
      ...first,
      ...entered.skipped,
      ...(entered.started ? [] : [{ type: 'run.completed' as const, data: {} }]),
    ],
  };
}

/** The document with one more rejection of the step at `index`. */
function countRejection(doc: RunDocument, index: number): RunDocument {
  return {
    ...doc,
    steps: doc.steps.map((s, i) =>
      i === index ? { ...s, rejections: (s.rejections ?? 0) + 1 } : s,
    ),
  };
}

/** What a decision's event says of it: the step, its inputs, comment, decider, a timeout. */
function decisionData(step: StepState, command: Completion) {
  return {
    step: step.name,
    inputFields: command.input_fields,
    ...present({ comment: step.comment, decidedBy: step.decided_by }),
    ...(command.timed_out ? { timedOut: true as const } : {}),
  };
}

/** A rejection: back to onReject's page while rejections stay under the limit, else a failure. */
function reject(
  run: RunRecord,
  merged: RunDocument,
  page: TemplatePage,
  command: Completion,
  at: Date,
): Completed {
  const index = command.step;
  const step = stepAt(merged, index);
  const counted = countRejection(merged, index);
  const rejections = stepAt(counted, index).rejections!;
  const max = page.maxRejections ?? DEFAULT_MAX_REJECTIONS;
  const target =
    page.onReject?.action === 'reopen'
      ? merged.template.pages.findIndex((p) => p.name === (page.onReject as { page: string }).page)
      : -1;
  const base = { ...decisionData(step, command), rejections };

  if (target >= 0 && target < index && rejections < max) {
    const entered = reopenFrom(counted, target, index, at, run.createdAt);
    return goOn(counted, entered, [
      {
        type: 'step.rejected',
        data: { ...base, outcome: 'reopened', ...nextData(entered.started) },
      },
      {
        type: 'step.reopened',
        data: {
          step: merged.template.pages[target]!.name,
          from: step.name,
          steps: entered.reopened,
        },
      },
    ]);
  }

  const limited = target >= 0 && rejections >= max;
  const reason = limited
    ? `'${step.name}' was rejected ${rejections} times, the most its page allows (maxRejections)`
    : `'${step.name}' was rejected`;
  const message = step.comment ? (limited ? `${reason}: ${step.comment}` : step.comment) : reason;
  return {
    next: {
      ...counted,
      current_step: null,
      pending: null,
      error: { message, at: at.toISOString() },
    },
    status: 'failed',
    events: [
      { type: 'step.rejected', data: { ...base, outcome: 'failed' } },
      { type: 'run.failed', data: { error: message, step: step.name } },
    ],
  };
}
