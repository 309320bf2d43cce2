// What the clock does to a run's current step, applied when its wake time (run-change.ts
// wakeAt, the current_step_wake_at column) comes: the step becomes overdue at its due date; its
// page's escalations apply in order as it stays overdue; an approval step nobody decided in time
// takes its page's default decision, as a worker would apply a person's (applyPending). All of
// it with the system as actor, in one change, which its writer stores guarded by the version it
// read: two workers waking the same run make the change once.
import { SYSTEM } from '../../audit/actor.js';
import type { NewRunEvent } from '../run-events.js';
import { hasPendingChange, type RunRecord, type StepState } from '../run-record.js';
import { applyPending } from './apply-pending.js';
import { currentColumns, present, withEvents } from './run-change.js';

const HOUR_MS = 3600_000;

/**
 * The run after everything its current step owes the clock by `now`; undefined when nothing is
 * owed (the step completed first, or a completion waits for a worker: that moves the step on).
 * Being overdue and escalations are not activity: last_activity moves only with a decision.
 */
export function wakeStep(run: RunRecord, now: Date): RunRecord | undefined {
  const doc = run.document;
  const index = doc.current_step;
  if (run.status !== 'active' || hasPendingChange(run) || index === null) return undefined;
  const original = doc.steps[index];
  const page = doc.template.pages[index];
  if (!original || !page || original.status !== 'active') return undefined;
  const t = now.getTime();
  let step: StepState = original;
  const events: NewRunEvent[] = [];

  if (step.due_date && step.overdue !== true && Date.parse(step.due_date) <= t) {
    step = { ...step, overdue: true };
    events.push({ type: 'step.overdue', data: { step: step.name, dueDate: step.due_date! } });
  }
  const escalations = page.escalations ?? [];
  const due = step.due_date ? Date.parse(step.due_date) : undefined;
  for (let e = step.escalated ?? 0; due !== undefined && e < escalations.length; e++) {
    const escalation = escalations[e]!;
    if (due + escalation.overdueByHours * HOUR_MS > t) break;
    const held = new Set(step.candidate_groups ?? []);
    const added = (escalation.addCandidateGroups ?? []).filter((group) => !held.has(group));
    const previous = step.assignee;
    step = {
      ...step,
      escalated: e + 1,
      ...(escalation.assignTo !== undefined ? { assignee: escalation.assignTo } : {}),
      ...(added.length > 0 ? { candidate_groups: [...held, ...added] } : {}),
    };
    events.push({
      type: 'step.escalated',
      data: {
        step: step.name,
        escalation: e,
        overdueByHours: escalation.overdueByHours,
        ...present({
          assignee: escalation.assignTo,
          previousAssignee: escalation.assignTo !== undefined ? previous : undefined,
        }),
        ...(added.length > 0 ? { addedCandidateGroups: added } : {}),
      },
    });
  }

  let next = run;
  if (events.length > 0) {
    const document = { ...doc, steps: doc.steps.map((s, i) => (i === index ? step : s)) };
    next = withEvents({ ...run, ...currentColumns(document), document }, now, SYSTEM, events);
  }
  const timeout = page.kind === 'approval' ? page.decisionTimeout : undefined;
  if (timeout && step.decision_due_at && Date.parse(step.decision_due_at) <= t) {
    // Recorded as a completion the system asked for, and applied at once.
    const seq = next.requestedSeq + 1;
    next = applyPending(
      {
        ...next,
        document: {
          ...next.document,
          pending: {
            seq,
            type: 'complete_step',
            step: index,
            input_fields: {},
            requested_at: now.toISOString(),
            requested_by: SYSTEM,
            decision: timeout.decision,
            timed_out: true,
          },
        },
        requestedSeq: seq,
        pendingSince: now,
      },
      now,
    );
  }
  return next === run ? undefined : next;
}
