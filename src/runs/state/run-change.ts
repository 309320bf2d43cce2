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

/** The record's columns that mirror the current step (for lists and filters). */
export function currentColumns(
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
