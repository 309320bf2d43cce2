// What every change of a run shares (the behaviours each transition is handed, never copies):
// numbering its events, leaving absent values out of them, reading a page's entry of a map,
// and the columns that follow the current step.
import type { Actor } from '../../audit/actor.js';
import type { NewRunEvent, RunEvent } from '../run-events.js';
import { RunStateError, type RunDocument, type RunRecord, type StepState } from '../run-record.js';

/** The record with events appended, numbered after the run's latest, made by `actor`. */
export function withEvents(
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
export function present<T extends Record<string, unknown>>(
  data: T,
): { [K in keyof T]: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(
    Object.entries(data).filter(([, v]) => v !== null && v !== undefined),
  ) as { [K in keyof T]: Exclude<T[K], null | undefined> };
}

/** map[key] only if it is the map's own entry: a page or input named "constructor" is data. */
export function ownValue(map: Readonly<Record<string, string>>, key: string): string | null {
  return Object.hasOwn(map, key) ? (map[key] ?? null) : null;
}

/** A change's time: never before the run's last activity, even when worker clocks disagree. */
export function changeTime(run: RunRecord, now: Date): Date {
  return new Date(Math.max(now.getTime(), run.lastActivity.getTime()));
}

/** The step at an index, which the run's document must have. */
export function stepAt(doc: RunDocument, index: number): StepState {
  const step = doc.steps[index];
  if (!step) throw new RunStateError(`run has no step ${index}`);
  return step;
}

const HOUR_MS = 3600_000;

/** The record's columns that mirror the current step (for lists, filters and the clock). */
export function currentColumns(
  doc: RunDocument,
): Pick<
  RunRecord,
  | 'currentStepIndex'
  | 'currentStepName'
  | 'currentStepAssignee'
  | 'currentStepDueDate'
  | 'currentStepOverdue'
  | 'currentStepWakeAt'
  | 'currentStepStartedAt'
> {
  const step = doc.current_step === null ? undefined : doc.steps[doc.current_step];
  return {
    currentStepIndex: step ? doc.current_step : null,
    currentStepName: step?.name ?? null,
    currentStepAssignee: step?.assignee ?? null,
    currentStepDueDate: step?.due_date ? new Date(step.due_date) : null,
    currentStepOverdue: step?.overdue === true,
    currentStepWakeAt: wakeAt(doc, step),
    currentStepStartedAt: step?.started_at ? new Date(step.started_at) : null,
  };
}

/**
 * The next moment the clock owes the current step something (state/step-clock.ts applies it):
 * its due date while not overdue, its page's next escalation past the due date, an approval's
 * decision timeout. Null when none is owed, or the step is not active.
 */
function wakeAt(doc: RunDocument, step: StepState | undefined): Date | null {
  if (!step || step.status !== 'active' || doc.current_step === null) return null;
  let at = Infinity;
  if (step.due_date) {
    const due = Date.parse(step.due_date);
    if (step.overdue !== true) at = due;
    const next = doc.template.pages[doc.current_step]?.escalations?.[step.escalated ?? 0];
    if (next) at = Math.min(at, due + next.overdueByHours * HOUR_MS);
  }
  if (step.decision_due_at && step.decision === undefined) {
    at = Math.min(at, Date.parse(step.decision_due_at));
  }
  return at === Infinity ? null : new Date(at);
}
